package faults

import (
	"net/http"
	"time"
)

// StreamType says what kind of exchange or SSE stream a fault looks at.
type StreamType uint8

// The stream types, as named in profiles.
const (
	// StreamAny matches every stream type in a selector; it never
	// describes a real exchange.
	StreamAny StreamType = iota
	// StreamPost is a POST of a JSON-RPC message and the SSE stream (if
	// any) the server answers it with.
	StreamPost
	// StreamGet is a GET that opens the standalone Streamable HTTP stream.
	StreamGet
	// StreamResume is a GET that carries Last-Event-ID to resume a stream.
	StreamResume
	// StreamLegacy is the GET stream of the 2024-11-05 HTTP+SSE transport,
	// and the POSTs to its message endpoint.
	StreamLegacy
	// StreamOther is anything else: a DELETE, a GET of a non-MCP path.
	StreamOther
)

var streamTypeNames = [...]string{"any", "post", "get", "resume", "legacy", "other"}

// String returns the profile name of t.
func (t StreamType) String() string {
	if int(t) < len(streamTypeNames) {
		return streamTypeNames[t]
	}
	return "unknown"
}

// RPCKind is the JSON-RPC 2.0 kind of a message.
type RPCKind uint8

// The JSON-RPC kinds, as named in profiles.
const (
	// RPCNone means the payload is not (or not known to be) JSON-RPC.
	RPCNone RPCKind = iota
	RPCRequest
	RPCNotification
	RPCResponse
	// RPCError is a response that carries an error member.
	RPCError
)

var rpcKindNames = [...]string{"none", "request", "notification", "response", "error"}

// String returns the profile name of k.
func (k RPCKind) String() string {
	if int(k) < len(rpcKindNames) {
		return rpcKindNames[k]
	}
	return "unknown"
}

// Exchange is what a Plan may look at when an HTTP exchange starts: the
// client's request, as the proxy classified it. It is read-only for a Plan.
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
	// Header is the client's request header.
	Header http.Header
	// SinceRun is the time from the start of the run to this exchange.
	SinceRun time.Duration
}

// ExchangeAction is a Plan's decision for an exchange, carried out by the
// proxy before anything is forwarded. The zero value forwards the request
// unchanged.
type ExchangeAction struct {
	// Latency delays the response headers by this much (the request is
	// forwarded after the wait).
	Latency time.Duration
	// Status, when non-zero, answers the client with this status code,
	// Header and Body instead of forwarding the request.
	Status int
	Header http.Header
	Body   []byte
	// DropRequest swallows the client's request: it is never forwarded.
	// The client is answered 202 Accepted, or, with Hang, left waiting
	// until it goes away.
	DropRequest bool
	Hang        bool
	// StripLastEventID removes Last-Event-ID from the forwarded request;
	// SetLastEventID, when HasLastEventID, replaces its value.
	StripLastEventID bool
	SetLastEventID   string
	HasLastEventID   bool
	// StripRequestHeaders and StripResponseHeaders name headers removed
	// from the forwarded request and from the response to the client.
	StripRequestHeaders  []string
	StripResponseHeaders []string
	// Fired lists the faults that produced this action.
	Fired []Firing
}

// Event is what a Plan may look at for one SSE event from the server. The
// byte slices are only valid during the call.
type Event struct {
	// Index is the position of the event in its stream, starting at 0,
	// counting every complete block the server sent (comments included).
	Index int
	// Type is the SSE event type ("" means message).
	Type []byte
	// ID is the event's id when HasID.
	ID    []byte
	HasID bool
	// HasRetry reports whether the event carries a retry field.
	HasRetry bool
	// Priming reports an id with empty data (SEP-1699).
	Priming bool
	// Dispatched reports whether a client fires an event for it.
	Dispatched bool
	// RPCKind and RPCMethod describe the JSON-RPC message in the data.
	RPCKind   RPCKind
	RPCMethod []byte
	// SinceStream and SinceRun are the times from the start of the stream
	// and of the run to the arrival of the event.
	SinceStream time.Duration
	SinceRun    time.Duration
}

// CloseMode says how a fault ends a stream.
type CloseMode uint8

// The ways a stream can end on purpose.
const (
	// CloseNone keeps the stream open.
	CloseNone CloseMode = iota
	// CloseAfter writes the current event, then ends the client's
	// response cleanly and cancels the upstream request.
	CloseAfter
	// CloseBefore ends the response cleanly without writing the current
	// event (nor anything after it).
	CloseBefore
	// CloseReset aborts the client's connection with a TCP RST without
	// writing the current event.
	CloseReset
)

// EventAction is a Plan's decision for one SSE event. The zero value
// forwards the event unchanged.
type EventAction struct {
	// Drop keeps the event from the client.
	Drop bool
	// Delay holds the event (and every later one behind it) this long.
	Delay time.Duration
	// Duplicate writes the event this many extra times.
	Duplicate int
	// StripRetry removes every retry line; StripID every id line.
	StripRetry bool
	StripID    bool
	// SetRetry, when HasSetRetry, adds or replaces the retry field (ms).
	SetRetry    int64
	HasSetRetry bool
	// RewriteID, when non-nil, replaces the event's id.
	RewriteID []byte
	// Corrupt breaks the JSON in the event's data.
	Corrupt bool
	// Fragment, when > 0, writes the event in pieces of at most this many
	// bytes, each flushed on its own.
	Fragment int
	// Noise injects this many comment lines before the event.
	Noise int
	// Stall stops sending for this long before the event; StallForever
	// stops for good (the stream stays open until the client leaves).
	Stall        time.Duration
	StallForever bool
	// Lose swallows this event and the next Lose-1 ones (the server
	// believes them delivered), then closes the client's side cleanly.
	Lose int
	// Close ends the stream at this event.
	Close CloseMode
	// Fired lists the faults that produced this action.
	Fired []Firing
}

// StreamAction is a Plan's decision when an SSE stream starts.
type StreamAction struct {
	// CloseAfter ends the stream cleanly this long after it started.
	CloseAfter time.Duration
	// Throttle limits the bytes per second written to the client; 0 means
	// no limit. ThrottleBurst is the limiter's burst in bytes.
	Throttle      int
	ThrottleBurst int
	// Close, when not CloseNone, ends the stream before its first event
	// ("just before the response").
	Close CloseMode
	// Fired lists the faults that produced this action.
	Fired []Firing
}

// Firing records one fault's part in a decision.
type Firing struct {
	// Index is the fault's position in its profile, from 0.
	Index int
	// Kind is the fault's kind name, e.g. "drop".
	Kind string
}

// Plan decides which faults hit which traffic. The proxy calls it and
// carries out what it returns; a Plan does no I/O and never sleeps. A Plan
// must be safe for concurrent use by many exchanges; the StreamPlan it
// returns is used by one stream pump at a time.
type Plan interface {
	// Exchange decides what happens to an exchange before it is forwarded.
	Exchange(ex *Exchange) ExchangeAction
	// Stream returns the decisions for an SSE stream the server opened
	// in answer to ex.
	Stream(ex *Exchange) StreamPlan
}

// StreamPlan decides for the events of one stream, in order.
type StreamPlan interface {
	// Start is called once, when the response headers arrive.
	Start() StreamAction
	// Event is called for each complete event block from the server.
	Event(ev *Event) EventAction
}
