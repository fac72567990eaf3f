package trace

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/frayproxy/fray/proxy/checks"
)

// Version is the trace format this package writes and the newest it
// reads. It grows when a member changes meaning or goes away, or when a
// new member's absence means something that an older writer's trace must
// not be taken to say; other new members do not change it, and readers
// ignore members they do not know.
//
// Format 2 records the name a request's body gives (its "name" member,
// absent when the body names none); a request of a format 1 trace has an
// unknown name, and the checks that compare it with the Mcp-Name header
// do not judge it.
//
// Format 3 may write an event's block as raw_parts (the text before its
// message, the message's JSON as it came, the text after it) rather than
// as raw: a reader of format 2 would take such an event for one with no
// block.
//
// Format 4 leaves out what a reader finds again. An event written as
// raw_parts with no message member has the JSON-RPC identity of the JSON
// the line holds (a reader of format 3 would take it for no message); a
// delivered event with no delivered_at_us left when it was read, and one
// with no delivered_id gave the client its own id, unless delivered_no_id
// says it gave none (a reader of format 3 would take either for none).
//
// Format 5 may mark an end unread: the client got bytes of the answer
// that fray did not read whole (a JSON body past the capture, event
// blocks past --max-block), so its requests are not judged unanswered;
// a reader of format 4 would judge them so.
const Version = 5

// versionFound is the first format that leaves out what a reader finds
// again.
const versionFound = 4

// versionNames is the first format that records a request's name.
const versionNames = 2

// Redacted replaces the value of a redacted header.
const Redacted = "[redacted]"

// DefaultRedact are the headers whose values a Writer redacts unless told
// not to.
var DefaultRedact = []string{"Authorization", "Cookie", "Set-Cookie", "Proxy-Authorization"}

// Header is the first line of a trace: what the run was.
type Header struct {
	// Version is the trace format version (Version when written).
	Version int
	// Started is the wall-clock time the proxy started; every time in
	// the trace is an offset from it.
	Started time.Time
	// Profile and Seed name the fault profile in force ("" when none),
	// ProfileText is its TOML, so that a trace can be checked and replayed
	// without the file.
	Profile     string
	Seed        uint64
	ProfileText string
	// Checks are check severities set over the profile's own (a test's
	// overrides), so that an offline check judges as the live run did.
	Checks map[string]checks.Severity
	// Redact lists the header names whose values were replaced by
	// Redacted; empty when nothing was redacted.
	Redact []string
}

// End is the last line of a trace: how the run ended.
type End struct {
	// At is when the run stopped observing, as the verifier's final report
	// is made as of it: the time since the proxy started.
	At time.Duration
	// Drained reports that no exchange (standalone GET streams aside) was
	// still open when the run stopped, so everything still owed was judged
	// at the end; when false, fray ended those exchanges itself and only
	// what was past its deadline was judged.
	Drained bool
	// Command, ExitCode and CommandError are the client command fray run
	// wrapped and how it ended (CommandError says why when it did not exit
	// 0: it could not start, it was interrupted); Command is nil otherwise.
	Command      []string
	ExitCode     int
	CommandError string
}

// wireHeader is the header line as JSON.
type wireHeader struct {
	Version     *int              `json:"fray_trace"`
	Started     string            `json:"started"`
	Profile     string            `json:"profile"`
	Seed        uint64            `json:"seed"`
	ProfileText string            `json:"profile_text"`
	Checks      map[string]string `json:"checks"`
	Redact      []string          `json:"redact"`
	// End marks the end line, which carries the time the run ended and
	// the number of observations written.
	End          *int     `json:"fray_trace_end"`
	AtUS         int64    `json:"at_us"`
	Observations uint64   `json:"observations"`
	Drained      bool     `json:"drained"`
	Command      []string `json:"command"`
	ExitCode     int      `json:"exit_code"`
	CommandError string   `json:"command_error"`
}

// wireObs is an observation line as JSON; byte members come as a string,
// or as base64 under NAME_b64 when they are not valid UTF-8.
type wireObs struct {
	Kind       string       `json:"kind"`
	AtUS       int64        `json:"at_us"`
	Exchange   uint64       `json:"exchange"`
	Stream     string       `json:"stream"`
	Session    string       `json:"session"`
	SessionSeq int          `json:"session_seq"`
	Protocol   string       `json:"protocol"`
	Fired      []wireFiring `json:"fired"`
	Request    *wireRequest `json:"request"`
	Response   *wireResp    `json:"response"`
	Event      *wireEvent   `json:"event"`
	End        *wireEnd     `json:"end"`
	Profile    *wireProfile `json:"profile"`

	// Probe members: a header or end line read where an observation was
	// expected.
	Version *int `json:"fray_trace"`
	EndMark *int `json:"fray_trace_end"`
}

type wireFiring struct {
	Index  int      `json:"index"`
	Kind   string   `json:"kind"`
	Traits []string `json:"traits"`
}

type wireProfile struct {
	Action string            `json:"action"`
	Name   string            `json:"name"`
	Seed   uint64            `json:"seed"`
	Text   string            `json:"text"`
	Fault  int               `json:"fault"`
	Faults int               `json:"faults"`
	Checks map[string]string `json:"checks"`
}

type wireMessage struct {
	Kind      string  `json:"kind"`
	Method    *string `json:"method"`
	MethodB64 *string `json:"method_b64"`
	ID        *string `json:"id"`
	IDB64     *string `json:"id_b64"`
	Progress  *string `json:"progress_token"`
	Protocol  *string `json:"protocol"`
	Name      *string `json:"name"`
	// NameUnknown marks a message read from a format 1 trace and written
	// again: its name was never recorded.
	NameUnknown bool    `json:"name_unknown"`
	ErrorCode   int     `json:"error_code"`
	Params      uint64  `json:"params_digest"`
	TaskID      *string `json:"task_id"`
	PollMS      int64   `json:"poll_ms"`
}

type wireRequest struct {
	Method      string        `json:"method"`
	Path        string        `json:"path"`
	Header      http.Header   `json:"header"`
	LastEventID *string       `json:"last_event_id"`
	Messages    []wireMessage `json:"messages"`
	Cancels     []string      `json:"cancels"`
	Action      *wireAction   `json:"action"`
}

type wireAction struct {
	LatencyUS            int64    `json:"latency_us"`
	Answered             bool     `json:"answered"`
	Dropped              bool     `json:"dropped"`
	Hang                 bool     `json:"hang"`
	LastEventIDChanged   bool     `json:"last_event_id_changed"`
	ForwardedLastEventID *string  `json:"forwarded_last_event_id"`
	StrippedHeaders      []string `json:"stripped_headers"`
	SetHeaders           []string `json:"set_headers"`
}

type wireResp struct {
	Status       int         `json:"status"`
	Origin       string      `json:"origin"`
	Header       http.Header `json:"header"`
	EventStream  bool        `json:"event_stream"`
	Session      string      `json:"session"`
	Throttle     int         `json:"throttle"`
	CloseAfterUS int64       `json:"close_after_us"`
}

type wireEvent struct {
	Index  int     `json:"index"`
	Raw    *string `json:"raw"`
	RawB64 *string `json:"raw_b64"`
	// RawParts: the block as the text before its message, the message's
	// JSON as it came, and the text after it (format 3).
	RawParts       []json.RawMessage `json:"raw_parts"`
	Parsed         bool              `json:"parsed"`
	Type           *string           `json:"type"`
	TypeB64        *string           `json:"type_b64"`
	ID             *string           `json:"id"`
	IDB64          *string           `json:"id_b64"`
	Retry          *int64            `json:"retry"`
	Priming        bool              `json:"priming"`
	Dispatched     bool              `json:"dispatched"`
	Message        *wireMessage      `json:"message"`
	Fate           string            `json:"fate"`
	DeliveredAtUS  *int64            `json:"delivered_at_us"`
	Delivered      *string           `json:"delivered"`
	DeliveredB64   *string           `json:"delivered_b64"`
	DeliveredID    *string           `json:"delivered_id"`
	DeliveredIDB64 *string           `json:"delivered_id_b64"`
	// DeliveredNoID: the client got no id, where the event had one
	// (format 4).
	DeliveredNoID  bool   `json:"delivered_no_id"`
	DeliveredRetry *int64 `json:"delivered_retry"`
	Copies         int    `json:"copies"`
	Corrupted      bool   `json:"corrupted"`
}

type wireEnd struct {
	Cause    string        `json:"cause"`
	Messages []wireMessage `json:"messages"`
	Error    string        `json:"error"`
	Unread   bool          `json:"unread,omitempty"`
}
