// Package observe defines what the proxy reports of the traffic it carries:
// one Observation per request, response, SSE event and end of exchange, in
// the order they happen on each exchange. The verifier, the trace writer
// and the metrics all consume the same observations, live or read back from
// a trace, so that a check run offline takes the same code path as a check
// run live.
//
// An Observation and everything it points to are valid only during the
// Observe call: the proxy reuses them, so that reporting an event costs no
// allocation. An observer that keeps something copies it.
package observe

import (
	"net/http"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/jsonrpc"
	"github.com/frayproxy/fray/proxy/mcp"
)

// Observer receives observations. The proxy calls Observe from the
// goroutine of the exchange observed (a Queue passes events on from its
// own), so it must be safe for concurrent use; the observations of one
// exchange arrive in order, those of different exchanges interleave.
// Observe must not block for long: the exchange, or the queue, waits.
type Observer interface {
	Observe(o *Observation)
}

// Kind says what an Observation reports.
type Kind uint8

// The kinds of observation, in the order an exchange produces them: one
// Request, at most one Response, any number of Events (SSE responses
// only), one End.
const (
	KindNone Kind = iota
	// KindRequest is a client's request, as fray classified it, and the
	// exchange faults fray applied to it.
	KindRequest
	// KindResponse is the response head the client got: from the upstream,
	// or made by fray (an injected status, a 502 when the upstream failed).
	KindResponse
	// KindEvent is one SSE event block from the upstream and what fray did
	// with it.
	KindEvent
	// KindEnd is the end of an exchange, with its cause.
	KindEnd
	// KindProfile is a change of the fault profile in force, made while
	// the run goes on (through the admin API, or a test): it belongs to no
	// exchange, and Exchange is 0.
	KindProfile
)

var kindNames = [...]string{"none", "request", "response", "event", "end", "profile"}

// String returns the kind's name as traces write it.
func (k Kind) String() string { return nameOf(kindNames[:], k) }

// ParseKind is the inverse of Kind.String; "none" is no kind a trace
// holds.
func ParseKind(s string) (Kind, bool) { return parseName[Kind](kindNames[:], s, 1) }

// Observation is one thing fray saw. Kind says which of Request, Response,
// Event, End and Profile is set; the others are nil.
type Observation struct {
	Kind Kind
	// At is the time since the proxy started.
	At time.Duration
	// Exchange numbers the exchanges of the proxy from 1, in arrival order.
	Exchange uint64
	// Stream is the exchange's type. A GET may become StreamLegacy once its
	// first event shows it is a legacy stream.
	Stream mcp.StreamType
	// Session is the exchange's session id ("" when none is known yet),
	// SessionSeq its number in the order fray first saw sessions, from 1.
	Session    string
	SessionSeq int
	// Protocol is the MCP protocol revision in force for the exchange, ""
	// when unknown.
	Protocol string
	// Fired lists the faults that acted on what this observation reports.
	Fired []faults.Firing

	Request  *Request
	Response *Response
	Event    *Event
	End      *End
	Profile  *ProfileChange
}

// The actions of a profile change.
const (
	// ProfileSwap: a new profile was put in force.
	ProfileSwap = "swap"
	// ProfileEnable and ProfileDisable: one fault of the profile in force
	// was switched on or off.
	ProfileEnable  = "enable"
	ProfileDisable = "disable"
)

// ProfileChange is a change of the fault profile in force while a run goes
// on. Faults of streams already running keep the profile they started
// with, but see faults switched off.
type ProfileChange struct {
	// Action is ProfileSwap, ProfileEnable or ProfileDisable.
	Action string
	// Name, Seed and Text are the profile in force after the change: its
	// name, the seed it was compiled with and its TOML ("" for a profile
	// built in code).
	Name string
	Seed uint64
	Text string
	// Checks are the check severities the profile's [checks] table sets.
	Checks map[string]checks.Severity
	// Faults is how many faults the profile has.
	Faults int
	// Fault is the index of the fault switched, for enable and disable.
	Fault int
}

// Request is a client's request.
type Request struct {
	Method string
	Path   string
	// Header is the request header as the client sent it. Observers that
	// write it out must redact secrets.
	Header http.Header
	// LastEventID is the client's Last-Event-ID when HasLastEventID.
	LastEventID    string
	HasLastEventID bool
	// Messages are the JSON-RPC messages of a POST body, in order.
	Messages []Message
	// Cancels are the request ids (raw JSON) that notifications/cancelled
	// messages of the body name in params.requestId, in order.
	Cancels []string
	// Action is what the exchange faults did to the request.
	Action RequestAction
}

// RequestAction is what exchange faults did to a request before it was
// forwarded. The zero value means it was forwarded unchanged.
type RequestAction struct {
	// Latency is the wait fray added before forwarding.
	Latency time.Duration
	// Answered: fray answered the client itself (a status fault, or a
	// swallowed request answered 202); the upstream never saw the request.
	Answered bool
	// Dropped: the request was swallowed and never forwarded; Hang: the
	// client was left waiting.
	Dropped bool
	Hang    bool
	// LastEventIDChanged: the Last-Event-ID forwarded differs from the
	// client's; ForwardedLastEventID is what went (HasForwardedLastEventID
	// false when it was removed).
	LastEventIDChanged      bool
	ForwardedLastEventID    string
	HasForwardedLastEventID bool
	// StrippedHeaders names the request headers removed before forwarding
	// (strip-header faults), e.g. Mcp-Session-Id.
	StrippedHeaders []string
	// SetHeaders are the request headers a rewrite-header fault set
	// before forwarding, in order (a later one for the same name wins).
	SetHeaders []faults.HeaderSet
}

// Origin says who made a response.
type Origin uint8

// The makers of a response.
const (
	// FromUpstream: the server's response, passed on.
	FromUpstream Origin = iota
	// FromFault: a fault made it (status, drop-request).
	FromFault
	// FromFray: fray's own error, e.g. 502 when the upstream could not be
	// reached, or 413 for a body over the limit.
	FromFray
)

var originNames = [...]string{"upstream", "fault", "fray"}

// String returns the origin's name as traces write it.
func (o Origin) String() string { return nameOf(originNames[:], o) }

// ParseOrigin is the inverse of Origin.String.
func ParseOrigin(s string) (Origin, bool) { return parseName[Origin](originNames[:], s, 0) }

// Response is the response head the client got.
type Response struct {
	Status int
	Origin Origin
	// Header is the response header as sent to the client.
	Header http.Header
	// EventStream: the body is an SSE stream fray parses.
	EventStream bool
	// Session is the Mcp-Session-Id the response carries, "" when none.
	Session string
	// Throttle (bytes/s) and CloseAfter are stream faults armed as the
	// stream started.
	Throttle   int
	CloseAfter time.Duration
}

// Fate is what happened to an event from the upstream.
type Fate uint8

// The fates of an event.
const (
	// Delivered: written to the client, perhaps changed (see Event).
	Delivered Fate = iota
	// Dropped by a drop fault; the stream went on.
	Dropped
	// Lost to a lose fault: swallowed as on a dying connection, the
	// stream closed after the last one.
	Lost
	// Cut: the stream was closed or reset at this event before it was
	// written.
	Cut
	// Stalled: a stall for ever began before the event; it was never
	// written.
	Stalled
	// Undelivered: the client went away before it could be written.
	Undelivered
)

var fateNames = [...]string{"delivered", "dropped", "lost", "cut", "stalled", "undelivered"}

// String returns the fate's name as traces write it.
func (f Fate) String() string { return nameOf(fateNames[:], f) }

// ParseFate is the inverse of Fate.String.
func ParseFate(s string) (Fate, bool) { return parseName[Fate](fateNames[:], s, 0) }

// Event is one SSE event block from the upstream, as fray read it (the
// same view the fault decision saw), and what became of it. Byte slices
// are only valid during the Observe call.
type Event struct {
	// Event is the block as the upstream sent it: its position, raw
	// bytes, the fields a client acts on and the JSON-RPC identity of its
	// data. For bytes passed through unparsed (a block past the size
	// limit, or cut by the end of the stream) only Index and Raw are set.
	mcp.Event

	Fate Fate
	// DeliveredAt is when the event was written to the client.
	DeliveredAt time.Duration
	// Delivered is the block as written to the client when it differs from
	// Raw (a fault changed it), nil otherwise.
	Delivered []byte
	// DeliveredID and DeliveredRetry are the fields the client got, which
	// faults may have removed or changed.
	DeliveredID       []byte
	DeliveredHasID    bool
	DeliveredRetry    int64
	DeliveredHasRetry bool
	// Copies is how many times the event was written (duplicate faults
	// make it more than one).
	Copies int
	// Corrupted: the data's JSON was broken on purpose.
	Corrupted bool
	// Unclassified: the exchange left RPCKind, RPCMethod and RPCID for
	// its Stream handle to find in Data (Stream.Classifies). What a
	// handle passes on never has it set.
	Unclassified bool
	// Scanned: RPCKind, RPCMethod and RPCID are what jsonrpc.Scan finds
	// in Data, as the proxy classifies every dispatched event, so that a
	// trace can leave them out and find them there again.
	Scanned bool
}

// Classify finds the JSON-RPC identity of an Unclassified event's data,
// and clears the mark; it leaves any other event as it is.
func (e *Event) Classify() {
	if !e.Unclassified {
		return
	}
	m := jsonrpc.Scan(e.Data)
	e.RPCKind, e.RPCMethod, e.RPCID, e.Unclassified, e.Scanned = m.Kind, m.Method, m.ID, false, true
}

// Message is the JSON-RPC identity of a message in a request or a JSON
// response body. ID is the id as raw JSON ("" for a notification);
// ProgressToken the raw JSON of the progress token a request asks for in
// params._meta ("" when none).
type Message struct {
	Kind          mcp.RPCKind
	Method        string
	ID            string
	ProgressToken string
	// Protocol is the revision a request names in params._meta (from
	// 2026-07-28), "" when none; Name is the value its Mcp-Name header
	// mirrors (params.name or params.uri), when HasName.
	Protocol string
	Name     string
	HasName  bool
	// NameUnknown says the record this message was read from does not
	// say which name the body gives (a trace written before fray recorded
	// it), whatever HasName says: nothing can be judged from the name.
	NameUnknown bool
	// ErrorCode is error.code of an error response, 0 when none.
	ErrorCode int
	// Params is a digest of a request's params without their _meta, the
	// same for a request re-issued under a new id; 0 when none.
	Params uint64
	// TaskID is the task a request names (params.taskId) or a response
	// reports (result.taskId), "" when none; PollMS the pollIntervalMs a
	// response gives for it, 0 when none.
	TaskID string
	PollMS int64
}

// Cause says how an exchange ended.
type Cause uint8

// The causes of an exchange's end.
const (
	// Complete: the response was delivered whole (a stream the upstream
	// ended cleanly included).
	Complete Cause = iota
	// UpstreamFailed: the upstream's response broke off (or it could not
	// be reached); fray aborted the client's response in turn.
	UpstreamFailed
	// ClientGone: the client went away first.
	ClientGone
	// FaultClosed: a fault ended the stream cleanly (close, lose, a timed
	// close).
	FaultClosed
	// FaultReset: a fault reset the client's connection.
	FaultReset
	// FaultAnswered: fray answered instead of forwarding.
	FaultAnswered
)

var causeNames = [...]string{"complete", "upstream-failed", "client-gone", "fault-closed", "fault-reset", "fault-answered"}

// String returns the cause's name as traces write it.
func (c Cause) String() string { return nameOf(causeNames[:], c) }

// ParseCause is the inverse of Cause.String.
func ParseCause(s string) (Cause, bool) { return parseName[Cause](causeNames[:], s, 0) }

// ByFault reports whether fray ended the exchange on purpose.
func (c Cause) ByFault() bool { return c >= FaultClosed }

// End is the end of an exchange.
type End struct {
	Cause Cause
	// Messages are the JSON-RPC messages of a JSON response body.
	Messages []Message
	// Error describes an UpstreamFailed end.
	Error string
	// Unread says the client got bytes of the answer that fray did not
	// read whole: a JSON body past the 1 MiB fray reads of it, or event
	// blocks past --max-block, passed on raw. An answer in them reached
	// the client, but fray cannot say which requests it answered.
	Unread bool
}

// RunObserver is an Observer that also takes a run of observations at
// once, as if each were passed to Observe in turn: the Queue passes its
// queued events on this way, so that an observer that locks takes its lock
// once per run rather than once per event. The run, and what its
// observations point to, are valid only during the call.
type RunObserver interface {
	Observer
	ObserveRun(run []Observation)
}

// ObserveRun passes run to ob, in order: at once when ob is a RunObserver,
// one observation at a time otherwise.
func ObserveRun(ob Observer, run []Observation) {
	if r, ok := ob.(RunObserver); ok {
		r.ObserveRun(run)
		return
	}
	for i := range run {
		ob.Observe(&run[i])
	}
}

// Func adapts a function to Observer.
type Func func(o *Observation)

// Observe calls f(o).
func (f Func) Observe(o *Observation) { f(o) }

// Tee returns an Observer that passes each observation to each of obs in
// turn, and each run (ObserveRun) to each of them in turn, so that every
// one of them sees the observations in the same order; nil entries are
// skipped. With none left it returns nil.
func Tee(obs ...Observer) Observer {
	var out tee
	for _, o := range obs {
		if o != nil {
			out = append(out, o)
		}
	}
	switch len(out) {
	case 0:
		return nil
	case 1:
		return out[0]
	}
	return out
}

type tee []Observer

func (t tee) Observe(o *Observation) {
	for _, ob := range t {
		ob.Observe(o)
	}
}

func (t tee) ObserveRun(run []Observation) {
	for _, ob := range t {
		ObserveRun(ob, run)
	}
}

// nameOf returns the name of v in names, or "unknown" past their end.
func nameOf[T ~uint8](names []string, v T) string {
	if int(v) < len(names) {
		return names[v]
	}
	return "unknown"
}

// parseName returns the value named s, looking at names from first on.
func parseName[T ~uint8](names []string, s string, first int) (T, bool) {
	for i := first; i < len(names); i++ {
		if names[i] == s {
			return T(i), true
		}
	}
	return 0, false
}
