package trace

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unsafe"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/jsonrpc"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/sse"
)

// decodeObservation turns a line's members, of a trace of format version,
// into an Observation.
func decodeObservation(w *wireObs, version int) (*observe.Observation, error) {
	k, ok := observe.ParseKind(w.Kind)
	if !ok {
		return nil, fmt.Errorf("kind %q is unknown", w.Kind)
	}
	st, ok := mcp.ParseStreamType(w.Stream)
	if !ok {
		return nil, fmt.Errorf("stream %q is unknown", w.Stream)
	}
	o := &observe.Observation{
		Kind: k, At: us(w.AtUS), Exchange: w.Exchange, Stream: st,
		Session: w.Session, SessionSeq: w.SessionSeq, Protocol: w.Protocol,
	}
	for _, f := range w.Fired {
		o.Fired = append(o.Fired, faults.Firing{Index: f.Index, Kind: f.Kind, Traits: firingTraits(f)})
	}
	var err error
	switch k {
	case observe.KindRequest:
		if w.Request == nil {
			return nil, fmt.Errorf("a request line without its request member")
		}
		o.Request, err = decodeRequest(w.Request)
	case observe.KindResponse:
		if w.Response == nil {
			return nil, fmt.Errorf("a response line without its response member")
		}
		o.Response, err = decodeResponse(w.Response)
	case observe.KindEvent:
		if w.Event == nil {
			return nil, fmt.Errorf("an event line without its event member")
		}
		o.Event, err = decodeEvent(w.Event, o.At, version)
	case observe.KindEnd:
		if w.End == nil {
			return nil, fmt.Errorf("an end line without its end member")
		}
		o.End, err = decodeEnd(w.End)
	case observe.KindProfile:
		if w.Profile == nil {
			return nil, fmt.Errorf("a profile line without its profile member")
		}
		o.Profile, err = decodeProfile(w.Profile)
	}
	if err != nil {
		return nil, err
	}
	return o, nil
}

// firingTraits are the traits a firing line names; a trace written
// before firings carried them gets those of the kind of that name as this
// fray registers it.
func firingTraits(f wireFiring) faults.Traits {
	if f.Traits == nil {
		k, _ := faults.LookupKind(f.Kind)
		return k.Traits
	}
	t, _ := faults.ParseTraits(f.Traits)
	return t
}

func decodeProfile(w *wireProfile) (*observe.ProfileChange, error) {
	switch w.Action {
	case observe.ProfileSwap, observe.ProfileEnable, observe.ProfileDisable:
	default:
		return nil, fmt.Errorf("profile action %q is not swap, enable or disable", w.Action)
	}
	sev, err := decodeChecks(w.Checks)
	if err != nil {
		return nil, fmt.Errorf("profile %w", err)
	}
	return &observe.ProfileChange{Action: w.Action, Name: w.Name, Seed: w.Seed, Text: w.Text, Fault: w.Fault, Faults: w.Faults, Checks: sev}, nil
}

// decodeChecks reads a table of check severities; nil for none.
func decodeChecks(w map[string]string) (map[string]checks.Severity, error) {
	var out map[string]checks.Severity
	for id, s := range w {
		sev, ok := checks.ParseSeverity(s)
		if !ok {
			return nil, fmt.Errorf("check %s: severity %q is not error, warning or off", id, s)
		}
		if out == nil {
			out = map[string]checks.Severity{}
		}
		out[id] = sev
	}
	return out, nil
}

func us(n int64) time.Duration { return time.Duration(n) * time.Microsecond }

func header(h http.Header) http.Header {
	if len(h) == 0 {
		return nil
	}
	return h
}

func decodeRequest(w *wireRequest) (*observe.Request, error) {
	r := &observe.Request{Method: w.Method, Path: w.Path, Header: header(w.Header), Cancels: w.Cancels}
	if w.LastEventID != nil {
		r.HasLastEventID, r.LastEventID = true, *w.LastEventID
	}
	var err error
	if r.Messages, err = decodeMessages(w.Messages, "request"); err != nil {
		return nil, err
	}
	if a := w.Action; a != nil {
		r.Action = observe.RequestAction{
			Latency: us(a.LatencyUS), Answered: a.Answered, Dropped: a.Dropped, Hang: a.Hang,
			LastEventIDChanged: a.LastEventIDChanged, StrippedHeaders: a.StrippedHeaders,
		}
		for i, h := range a.SetHeaders {
			name, value, ok := strings.Cut(h, ": ")
			if !ok {
				return nil, fmt.Errorf("request.action.set_headers[%d] %q is not \"Name: value\"", i, h)
			}
			r.Action.SetHeaders = append(r.Action.SetHeaders, faults.HeaderSet{Name: name, Value: value})
		}
		if a.ForwardedLastEventID != nil {
			r.Action.HasForwardedLastEventID, r.Action.ForwardedLastEventID = true, *a.ForwardedLastEventID
		}
	}
	return r, nil
}

func decodeMessages(ws []wireMessage, where string) ([]observe.Message, error) {
	var out []observe.Message
	for i, m := range ws {
		k, ok := mcp.ParseRPCKind(m.Kind)
		if !ok {
			return nil, fmt.Errorf("%s.messages[%d].kind %q is unknown", where, i, m.Kind)
		}
		om := observe.Message{Kind: k, Method: deref(m.Method), ID: deref(m.ID), ProgressToken: deref(m.Progress), Protocol: deref(m.Protocol), ErrorCode: m.ErrorCode, Params: m.Params, TaskID: deref(m.TaskID), PollMS: m.PollMS}
		if m.Name != nil {
			om.Name, om.HasName = *m.Name, true
		}
		om.NameUnknown = m.NameUnknown
		out = append(out, om)
	}
	return out, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// The status codes a response in a trace may have (RFC 9110 §15: three
// digits, 1xx to 5xx); a replay writes the status as it is.
const (
	minStatus = 100
	maxStatus = 599
)

func decodeResponse(w *wireResp) (*observe.Response, error) {
	origin, ok := observe.ParseOrigin(w.Origin)
	if !ok {
		return nil, fmt.Errorf("response.origin %q is unknown", w.Origin)
	}
	if w.Status < minStatus || w.Status > maxStatus {
		return nil, fmt.Errorf("response.status %d is outside %d-%d, the status codes HTTP has", w.Status, minStatus, maxStatus)
	}
	return &observe.Response{
		Status: w.Status, Origin: origin, Header: header(w.Header), EventStream: w.EventStream,
		Session: w.Session, Throttle: w.Throttle, CloseAfter: us(w.CloseAfterUS),
	}, nil
}

// bytesOf decodes a byte member written as a string or as NAME_b64; nil
// when neither is there.
func bytesOf(name string, s, b64 *string) ([]byte, bool, error) {
	switch {
	case b64 != nil:
		b, err := base64.StdEncoding.DecodeString(*b64)
		if err != nil {
			return nil, false, fmt.Errorf("%s_b64: %v", name, err)
		}
		return nonEmpty(b), true, nil
	case s != nil:
		return nonEmpty([]byte(*s)), true, nil
	}
	return nil, false, nil
}

// rawOf decodes an event's block: from raw or raw_b64, or from
// raw_parts, the text before the message's JSON, the JSON as it came and
// the text after it.
func rawOf(w *wireEvent) ([]byte, error) {
	if w.RawParts == nil {
		b, _, err := bytesOf("event.raw", w.Raw, w.RawB64)
		return b, err
	}
	if w.Raw != nil || w.RawB64 != nil {
		return nil, fmt.Errorf("event has both raw_parts and raw; a trace writes one of them")
	}
	if n := len(w.RawParts); n != 3 {
		return nil, fmt.Errorf("event.raw_parts has %d parts, want 3: the text before the message, the message, the text after it", n)
	}
	var before, after string
	if json.Unmarshal(w.RawParts[0], &before) != nil {
		return nil, fmt.Errorf("event.raw_parts[0] is %.40s, want the text before the message as a string", w.RawParts[0])
	}
	if json.Unmarshal(w.RawParts[2], &after) != nil {
		return nil, fmt.Errorf("event.raw_parts[2] is %.40s, want the text after the message as a string", w.RawParts[2])
	}
	msg := w.RawParts[1]
	if len(msg) == 0 || msg[0] != '{' && msg[0] != '[' {
		return nil, fmt.Errorf("event.raw_parts[1] is %.40s, want the message, a JSON object or array", msg)
	}
	raw := make([]byte, 0, len(before)+len(msg)+len(after))
	return append(append(append(raw, before...), msg...), after...), nil
}

func nonEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// decodeEvent turns an event member, of an observation at at in a trace of
// format version, into an Event; for format 4 it finds again what the
// writer left out (appendEvent).
func decodeEvent(w *wireEvent, at time.Duration, version int) (*observe.Event, error) {
	fate, ok := observe.ParseFate(w.Fate)
	if !ok {
		return nil, fmt.Errorf("event.fate %q is unknown", w.Fate)
	}
	found := version >= versionFound
	delivered := found && fate == observe.Delivered
	e := &observe.Event{
		Event: mcp.Event{Index: w.Index, Parsed: w.Parsed, Priming: w.Priming, Dispatched: w.Dispatched},
		Fate:  fate, Copies: w.Copies, Corrupted: w.Corrupted,
	}
	switch {
	case w.DeliveredAtUS != nil:
		e.DeliveredAt = us(*w.DeliveredAtUS)
	case delivered:
		e.DeliveredAt = at
	}
	var err error
	if e.Raw, err = rawOf(w); err != nil {
		return nil, err
	}
	if e.Type, _, err = bytesOf("event.type", w.Type, w.TypeB64); err != nil {
		return nil, err
	}
	if e.ID, e.HasID, err = bytesOf("event.id", w.ID, w.IDB64); err != nil {
		return nil, err
	}
	if w.Retry != nil {
		e.Retry, e.HasRetry = *w.Retry, true
	}
	if m := w.Message; m != nil {
		k, ok := mcp.ParseRPCKind(m.Kind)
		if !ok {
			return nil, fmt.Errorf("event.message.kind %q is unknown", m.Kind)
		}
		e.RPCKind = k
		if e.RPCMethod, _, err = bytesOf("event.message.method", m.Method, m.MethodB64); err != nil {
			return nil, err
		}
		if e.RPCID, _, err = bytesOf("event.message.id", m.ID, m.IDB64); err != nil {
			return nil, err
		}
	}
	if e.Parsed && e.Dispatched {
		// The message a format 4 writer left out is found again in the
		// data, which is then a part of the block, as the proxy's view
		// has it: a writer leaves the message out again, the JSON being
		// JSON-RPC. Other data is a copy, since the message the line
		// names says nothing of whether it is JSON.
		derive := found && w.Message == nil && w.RawParts != nil
		e.Data = dataOf(e.Raw, derive)
		if derive {
			m := jsonrpc.Scan(e.Data)
			e.RPCKind, e.RPCMethod, e.RPCID = m.Kind, m.Method, m.ID
			_, _, e.Scanned = rawParts(e, e.Raw)
		}
	}
	var has bool
	if e.Delivered, has, err = bytesOf("event.delivered", w.Delivered, w.DeliveredB64); err != nil {
		return nil, err
	}
	if has && e.Delivered == nil {
		e.Delivered = []byte{}
	}
	if e.DeliveredID, e.DeliveredHasID, err = bytesOf("event.delivered_id", w.DeliveredID, w.DeliveredIDB64); err != nil {
		return nil, err
	}
	if delivered && !e.DeliveredHasID && !w.DeliveredNoID {
		e.DeliveredID, e.DeliveredHasID = e.ID, e.HasID
	}
	if w.DeliveredRetry != nil {
		e.DeliveredRetry, e.DeliveredHasRetry = *w.DeliveredRetry, true
	}
	return e, nil
}

func decodeEnd(w *wireEnd) (*observe.End, error) {
	c, ok := observe.ParseCause(w.Cause)
	if !ok {
		return nil, fmt.Errorf("end.cause %q is unknown", w.Cause)
	}
	msgs, err := decodeMessages(w.Messages, "end")
	if err != nil {
		return nil, err
	}
	return &observe.End{Cause: c, Messages: msgs, Error: w.Error, Unread: w.Unread}, nil
}

// dataOf is the data a client dispatches for the event block raw, as the
// live view had it: a trace keeps the block, not its parts. With part,
// data that is one piece of the block (one data line) is that part of
// raw; other data is a copy.
func dataOf(raw []byte, part bool) []byte {
	rd := sse.NewReader(bytes.NewReader(raw), len(raw)+1)
	e, err := rd.Next()
	if err != nil || e.Data == nil {
		return nil
	}
	if part && len(e.Raw) == len(raw) && len(e.Data) > 0 {
		// The reader's block holds raw's bytes; only the addresses are
		// compared.
		off := uintptr(unsafe.Pointer(unsafe.SliceData(e.Data))) - uintptr(unsafe.Pointer(unsafe.SliceData(e.Raw)))
		if off <= uintptr(len(raw)-len(e.Data)) {
			return raw[off : int(off)+len(e.Data) : int(off)+len(e.Data)]
		}
	}
	return bytes.Clone(e.Data)
}
