package faults

import (
	"net/http"
	"time"

	"github.com/frayproxy/fray/proxy/mcp"
)

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
	// SetRequestHeaders are set on the forwarded request, in order, after
	// the stripped ones are removed.
	SetRequestHeaders []HeaderSet
	// Fired lists the faults that produced this action.
	Fired []Firing
}

// HeaderSet is one header field a fault sets: its canonical name and
// the value it gets.
type HeaderSet struct {
	Name, Value string
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
	// Buffer holds the event back, with those held before it, until an
	// event that is not held or the stream's end releases them all.
	Buffer bool
	// Close ends the stream at this event.
	Close CloseMode
	// Hold, with Close or Lose: once the client's side is ended, fray
	// goes on reading the upstream's stream, swallowing what comes (the
	// server believes it delivered), until the client resumes, the stream
	// ends or the proxy's hold bound passes, so that every event the
	// server produced while the client was away is known.
	Hold bool
	// Fired lists the faults that produced this action.
	Fired []Firing

	// ids, while a stream plan decides, is the plan's chunk that
	// rewritten ids are carved from (see idTemplate.expandInto); nil in
	// the action returned.
	ids *[]byte
}

// StreamAction is a Plan's decision when an SSE stream starts.
type StreamAction struct {
	// CloseAfter ends the stream cleanly this long after it started.
	CloseAfter time.Duration
	// CloseIdle ends the stream cleanly once this long has passed without
	// a byte from the server (see IdleExpired); 0 means never.
	CloseIdle time.Duration
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
	// Traits say what the fault did to traffic (its kind's, or those its
	// parameters chose).
	Traits Traits
}

// Plan decides which faults hit which traffic. The proxy calls it and
// carries out what it returns; a Plan does no I/O and never sleeps. A Plan
// must be safe for concurrent use by many exchanges; the StreamPlan it
// returns is used by one stream pump at a time.
type Plan interface {
	// Exchange decides what happens to an exchange before it is forwarded.
	Exchange(ex *mcp.Exchange) ExchangeAction
	// Stream returns the decisions for an SSE stream the server opened
	// in answer to ex.
	Stream(ex *mcp.Exchange) StreamPlan
}

// StreamPlan decides for the events of one stream, in order.
type StreamPlan interface {
	// Start is called once, when the response headers arrive.
	Start() StreamAction
	// Event is called for each complete event block from the server.
	// The action's Fired is valid until the next call.
	Event(ev *mcp.Event) EventAction
}
