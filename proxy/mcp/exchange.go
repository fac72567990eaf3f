package mcp

import (
	"net/http"
	"time"
)

// Exchange is one HTTP exchange as fray classified it when it began: what
// fault decisions look at, and what observations report. It is read-only
// once classified, but for Response, set when a stream starts.
type Exchange struct {
	// Method and Path are the client's request method and path (the path
	// as the client sent it to fray, before the upstream base is added).
	Method string
	Path   string
	// Stream is the type of the exchange.
	Stream StreamType
	// Session is the Mcp-Session-Id (or legacy session id), "" when none.
	Session string
	// SessionSeq numbers sessions in the order fray first saw them,
	// starting at 1; 0 when the exchange has no session.
	SessionSeq int
	// StreamSeq numbers the exchanges of Stream type within the session,
	// starting at 1.
	StreamSeq int
	// RPCKind and RPCMethod describe the client's JSON-RPC message (the
	// first one of a batch) for a POST; RPCID is its id as raw JSON.
	RPCKind   RPCKind
	RPCMethod string
	RPCID     string
	// RPCName is the name that request targets (params.name of tools/call
	// and prompts/get, params.uri of resources/read), "" when none.
	RPCName string
	// Header is the client's request header.
	Header http.Header
	// SinceRun is the time from the start of the run to this exchange.
	SinceRun time.Duration
	// Response is the upstream's response header once a stream of the
	// exchange starts, nil before (and for an exchange answered without
	// the upstream).
	Response http.Header
}

// Event is one SSE event block from a server as fray reads it: the fields
// a conforming client acts on, the JSON-RPC identity of its data, and when
// it came. The fault decision and the observation of an event read the
// same Event. Byte slices are valid only during the call they are passed
// to. The zero value is an empty block that was not parsed.
type Event struct {
	// Index is the block's position in its stream, from 0, counting every
	// block the server sent (comments included).
	Index int
	// Raw is the block as the server sent it.
	Raw []byte
	// Parsed is false for bytes passed through unparsed (a block past the
	// size limit, or cut by the end of the stream); the fields below are
	// then zero.
	Parsed bool
	// Type is the SSE event type ("" means message); ID the id when HasID;
	// Retry the retry in milliseconds when HasRetry.
	Type     []byte
	ID       []byte
	HasID    bool
	Retry    int64
	HasRetry bool
	// Priming reports an id with empty data (SEP-1699); Dispatched whether
	// a client fires an event for the block.
	Priming    bool
	Dispatched bool
	// Data is the data buffer a client dispatches.
	Data []byte
	// RPCKind, RPCMethod and RPCID are the JSON-RPC identity of the data:
	// its kind, its method (still escaped, as sent) and its id as raw
	// JSON; RPCNone when the data is not JSON-RPC.
	RPCKind   RPCKind
	RPCMethod []byte
	RPCID     []byte
	// SinceStream and SinceRun are the times from the start of the stream
	// and of the run to the block's arrival.
	SinceStream time.Duration
	SinceRun    time.Duration
}
