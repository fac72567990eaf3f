package trace

// This file keeps the encoder as it was before it was made faster, as the
// reference the tests hold the current one to: the trace format is read
// by fray check, fray replay, the timeline and users' tools, so every
// observation must encode to exactly the bytes it did, as the format
// (now 4) says.

import (
	"bytes"
	"encoding/base64"
	"maps"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// refEnc appends one JSON object to a reused buffer. It is hand-written so
// that tracing an event costs no allocation and no reflection: the writer
// runs on the proxy's per-event path.
type refEnc struct {
	b     []byte
	first bool // no member written yet in the current object
	keys  []string
	// head is the last exchangeHead written, for the next observation
	// of the same exchange (most are events of one stream).
	head refHeadKey
	hb   []byte
}

// refHeadKey is what exchangeHead writes.
type refHeadKey struct {
	exchange   uint64
	stream     mcp.StreamType
	session    string
	sessionSeq int
	protocol   string
}

// exchangeHead writes the members every observation of an exchange
// shares, copying them when they are those written last.
func (e *refEnc) exchangeHead(exchange uint64, stream mcp.StreamType, session string, sessionSeq int, protocol string) {
	k := refHeadKey{exchange, stream, session, sessionSeq, protocol}
	if k == e.head && len(e.hb) > 0 && !e.first {
		e.b = append(e.b, e.hb...)
		return
	}
	start, first := len(e.b), e.first
	e.uint("exchange", exchange)
	e.str("stream", stream.String())
	e.strNonEmpty("session", session)
	e.intNonZero("session_seq", int64(sessionSeq))
	e.strNonEmpty("protocol", protocol)
	if !first {
		e.head, e.hb = k, append(e.hb[:0], e.b[start:]...)
	}
}

func (e *refEnc) open() {
	e.b = append(e.b, '{')
	e.first = true
}

func (e *refEnc) close() {
	e.b = append(e.b, '}')
	e.first = false
}

// key writes a member name and the colon.
func (e *refEnc) key(k string) {
	b := e.b // a local, so that the appends need not store e.b each time
	if !e.first {
		b = append(b, ',')
	}
	e.first = false
	b = append(b, '"')
	b = append(b, k...)
	e.b = append(b, '"', ':')
}

// refJSONSafe holds the bytes a JSON string carries as they are: ASCII but
// the controls, the quote and the backslash.
var refJSONSafe = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// object opens a nested object under k.
func (e *refEnc) object(k string) {
	e.key(k)
	e.open()
}

func (e *refEnc) str(k, v string) {
	e.key(k)
	e.b = refAppendString(e.b, v)
}

func (e *refEnc) strNonEmpty(k, v string) {
	if v != "" {
		e.str(k, v)
	}
}

func (e *refEnc) int(k string, v int64) {
	e.key(k)
	e.b = strconv.AppendInt(e.b, v, 10)
}

func (e *refEnc) intNonZero(k string, v int64) {
	if v != 0 {
		e.int(k, v)
	}
}

func (e *refEnc) uint(k string, v uint64) {
	e.key(k)
	e.b = strconv.AppendUint(e.b, v, 10)
}

func (e *refEnc) boolTrue(k string) {
	e.key(k)
	e.b = append(e.b, "true"...)
}

func (e *refEnc) flag(k string, v bool) {
	if v {
		e.boolTrue(k)
	}
}

// bytes writes b as a JSON string under k when it is valid UTF-8, and as
// standard base64 under k+"_b64" otherwise, so that no byte is lost.
func (e *refEnc) bytes(k string, b []byte) {
	if utf8.Valid(b) {
		e.key(k)
		e.b = refAppendString(e.b, b)
		return
	}
	if !e.first {
		e.b = append(e.b, ',')
	}
	e.first = false
	e.b = append(e.b, '"')
	e.b = append(e.b, k...)
	e.b = append(e.b, `_b64":"`...)
	e.b = base64.StdEncoding.AppendEncode(e.b, b)
	e.b = append(e.b, '"')
}

// raw writes an event's block raw: as raw_parts, the text before the
// JSON, the JSON as it is and the text after it, when the event's data
// is a classified message found in raw as one piece, an object or array
// of ASCII bytes once the blanks around it are left to the text, and the
// text is UTF-8; as raw (or raw_b64) otherwise. It reports whether it
// wrote raw_parts.
func (e *refEnc) raw(ev *observe.Event, raw []byte) bool {
	d := ev.Data
	if ev.RPCKind != mcp.RPCNone && ev.Parsed && ev.Dispatched && len(d) > 0 {
		for from := 0; from+len(d) <= len(raw); from++ {
			if &raw[from] != &d[0] {
				continue
			}
			to := from + len(d)
			for from < to && (raw[from] == ' ' || raw[from] == '\t') {
				from++
			}
			for to > from && (raw[to-1] == ' ' || raw[to-1] == '\t') {
				to--
			}
			msg := raw[from:to]
			ascii := true
			for _, c := range msg {
				ascii = ascii && c < utf8.RuneSelf
			}
			object := len(msg) >= 2 && msg[0] == '{' && msg[len(msg)-1] == '}'
			array := len(msg) >= 2 && msg[0] == '[' && msg[len(msg)-1] == ']'
			if ascii && (object || array) && utf8.Valid(raw[:from]) && utf8.Valid(raw[to:]) {
				e.key("raw_parts")
				e.b = append(refAppendString(append(e.b, '['), raw[:from]), ',')
				e.b = append(refAppendString(append(append(e.b, msg...), ','), raw[to:]), ']')
				return true
			}
			break
		}
	}
	e.bytes("raw", raw)
	return false
}

func (e *refEnc) bytesNonEmpty(k string, b []byte) {
	if len(b) > 0 {
		e.bytes(k, b)
	}
}

// strings writes a JSON array of strings.
func (e *refEnc) strings(k string, vs []string) {
	e.key(k)
	e.b = append(e.b, '[')
	for i, v := range vs {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.b = refAppendString(e.b, v)
	}
	e.b = append(e.b, ']')
}

// header writes a header map with sorted names, each value as red says.
func (e *refEnc) header(k string, h map[string][]string, red *redactor) {
	e.key(k)
	e.keys = e.keys[:0]
	for name := range h {
		e.keys = append(e.keys, name)
	}
	slices.Sort(e.keys)
	e.b = append(e.b, '{')
	for i, name := range e.keys {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.b = refAppendString(e.b, name)
		e.b = append(e.b, ':', '[')
		for j, v := range h[name] {
			if j > 0 {
				e.b = append(e.b, ',')
			}
			e.b = refAppendString(e.b, red.value(name, v))
		}
		e.b = append(e.b, ']')
	}
	e.b = append(e.b, '}')
}

const refHexDigits = "0123456789abcdef"

// refAppendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD,
// as encoding/json does; callers that must keep every byte use refEnc.bytes.
// Unlike encoding/json, <, > and & are not escaped: a trace is not HTML.
func refAppendString[S string | []byte](b []byte, s S) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		// The common case, a run of bytes written as they are, in one
		// tight loop.
		for i < len(s) && refJSONSafe[s[i]] {
			i++
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', refHexDigits[c>>4], refHexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		size := refRuneLen(s, i)
		if size == 0 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		// U+2028 and U+2029 are valid JSON but end a line in a JavaScript
		// source; the timeline embeds trace text in a script.
		if size == 3 && c == 0xe2 && s[i+1] == 0x80 && (s[i+2] == 0xa8 || s[i+2] == 0xa9) {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', refHexDigits[s[i+2]&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// refRuneLen returns the length of the valid UTF-8 sequence that starts at
// s[i] (a byte >= 0x80), or 0 when none does.
func refRuneLen[S string | []byte](s S, i int) int {
	cont := func(j int, lo, hi byte) bool { return j < len(s) && s[j] >= lo && s[j] <= hi }
	c := s[i]
	switch {
	case c < 0xc2:
		return 0
	case c < 0xe0:
		if cont(i+1, 0x80, 0xbf) {
			return 2
		}
	case c < 0xf0:
		lo, hi := byte(0x80), byte(0xbf)
		if c == 0xe0 {
			lo = 0xa0
		} else if c == 0xed {
			hi = 0x9f
		}
		if cont(i+1, lo, hi) && cont(i+2, 0x80, 0xbf) {
			return 3
		}
	case c < 0xf5:
		lo, hi := byte(0x80), byte(0xbf)
		if c == 0xf0 {
			lo = 0x90
		} else if c == 0xf4 {
			hi = 0x8f
		}
		if cont(i+1, lo, hi) && cont(i+2, 0x80, 0xbf) && cont(i+3, 0x80, 0xbf) {
			return 4
		}
	}
	return 0
}

// checks writes a table of check severities, sorted by id; nothing for
// none.
func (e *refEnc) checks(sev map[string]checks.Severity) {
	if len(sev) == 0 {
		return
	}
	e.key("checks")
	e.open()
	for _, id := range slices.Sorted(maps.Keys(sev)) {
		e.str(id, string(sev[id]))
	}
	e.close()
}

// refEncodeObservation appends o as one JSON object.
func refEncodeObservation(e *refEnc, o *observe.Observation, red *redactor) {
	e.open()
	e.str("kind", o.Kind.String())
	e.int("at_us", o.At.Microseconds())
	e.exchangeHead(o.Exchange, o.Stream, red.session(o.Session), o.SessionSeq, o.Protocol)
	if len(o.Fired) > 0 {
		e.key("fired")
		e.b = append(e.b, '[')
		for i, f := range o.Fired {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.open()
			e.int("index", int64(f.Index))
			e.str("kind", f.Kind)
			e.strings("traits", f.Traits.Names())
			e.close()
		}
		e.b = append(e.b, ']')
	}
	switch {
	case o.Request != nil:
		refEncodeRequest(e, o.Request, red)
	case o.Response != nil:
		refEncodeResponse(e, o.Response, red)
	case o.Event != nil:
		refEncodeEvent(e, o.Event, o.At, red)
	case o.End != nil:
		refEncodeEnd(e, o.End)
	case o.Profile != nil:
		refEncodeProfile(e, o.Profile)
	}
	e.close()
}

func refEncodeProfile(e *refEnc, p *observe.ProfileChange) {
	e.object("profile")
	e.str("action", p.Action)
	e.str("name", p.Name)
	e.uint("seed", p.Seed)
	e.strNonEmpty("text", p.Text)
	if p.Action != observe.ProfileSwap {
		e.int("fault", int64(p.Fault))
	}
	e.int("faults", int64(p.Faults))
	e.checks(p.Checks)
	e.close()
}

func refEncodeRequest(e *refEnc, r *observe.Request, red *redactor) {
	e.object("request")
	e.str("method", r.Method)
	e.str("path", r.Path)
	if len(r.Header) > 0 {
		e.header("header", r.Header, red)
	}
	if r.HasLastEventID {
		e.str("last_event_id", r.LastEventID)
	}
	refEncodeMessages(e, r.Messages)
	if len(r.Cancels) > 0 {
		e.strings("cancels", r.Cancels)
	}
	a := &r.Action
	if a.Latency != 0 || a.Answered || a.Dropped || a.Hang || a.LastEventIDChanged || len(a.StrippedHeaders) > 0 || len(a.SetHeaders) > 0 {
		e.object("action")
		e.intNonZero("latency_us", a.Latency.Microseconds())
		e.flag("answered", a.Answered)
		e.flag("dropped", a.Dropped)
		e.flag("hang", a.Hang)
		e.flag("last_event_id_changed", a.LastEventIDChanged)
		if a.HasForwardedLastEventID {
			e.str("forwarded_last_event_id", a.ForwardedLastEventID)
		}
		if len(a.StrippedHeaders) > 0 {
			e.strings("stripped_headers", a.StrippedHeaders)
		}
		if len(a.SetHeaders) > 0 {
			set := make([]string, len(a.SetHeaders))
			for i, h := range a.SetHeaders {
				set[i] = h.Name + ": " + h.Value
			}
			e.strings("set_headers", set)
		}
		e.close()
	}
	e.close()
}

func refEncodeMessages(e *refEnc, ms []observe.Message) {
	if len(ms) == 0 {
		return
	}
	e.key("messages")
	e.b = append(e.b, '[')
	for i := range ms {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		m := &ms[i]
		e.open()
		e.str("kind", m.Kind.String())
		e.strNonEmpty("method", m.Method)
		e.strNonEmpty("id", m.ID)
		e.strNonEmpty("progress_token", m.ProgressToken)
		e.strNonEmpty("protocol", m.Protocol)
		if m.HasName {
			e.str("name", m.Name)
		}
		e.flag("name_unknown", m.NameUnknown)
		e.intNonZero("error_code", int64(m.ErrorCode))
		if m.Params != 0 {
			e.uint("params_digest", m.Params)
		}
		e.strNonEmpty("task_id", m.TaskID)
		e.intNonZero("poll_ms", m.PollMS)
		e.close()
	}
	e.b = append(e.b, ']')
}

func refEncodeResponse(e *refEnc, r *observe.Response, red *redactor) {
	e.object("response")
	e.int("status", int64(r.Status))
	e.str("origin", r.Origin.String())
	if len(r.Header) > 0 {
		e.header("header", r.Header, red)
	}
	e.flag("event_stream", r.EventStream)
	e.strNonEmpty("session", red.session(r.Session))
	e.intNonZero("throttle", int64(r.Throttle))
	e.intNonZero("close_after_us", r.CloseAfter.Microseconds())
	e.close()
}

func refEncodeEvent(e *refEnc, ev *observe.Event, at time.Duration, red *redactor) {
	raw, delivered := ev.Raw, ev.Delivered
	if string(ev.Type) == "endpoint" {
		// A legacy endpoint's URL carries the session id in its query.
		raw = red.endpoint(raw)
		if delivered != nil {
			delivered = red.endpoint(delivered)
		}
	}
	e.object("event")
	e.int("index", int64(ev.Index))
	parts := e.raw(ev, raw)
	e.flag("parsed", ev.Parsed)
	e.bytesNonEmpty("type", ev.Type)
	if ev.HasID {
		e.bytes("id", ev.ID)
	}
	if ev.HasRetry {
		e.int("retry", ev.Retry)
	}
	e.flag("priming", ev.Priming)
	e.flag("dispatched", ev.Dispatched)
	// Format 4: the message of an event written as raw_parts, scanned
	// from its data, is found again in the JSON the line holds.
	if (ev.RPCKind != 0 || len(ev.RPCMethod) > 0 || len(ev.RPCID) > 0) && !(parts && ev.Scanned) {
		e.object("message")
		e.str("kind", ev.RPCKind.String())
		e.bytesNonEmpty("method", ev.RPCMethod)
		e.bytesNonEmpty("id", ev.RPCID)
		e.close()
	}
	e.str("fate", ev.Fate.String())
	// Format 4: a delivered event's time and id are left out when they
	// are the time it was read and its own id.
	if ev.Fate == observe.Delivered {
		if ev.DeliveredAt.Microseconds() != at.Microseconds() {
			e.int("delivered_at_us", ev.DeliveredAt.Microseconds())
		}
	} else {
		e.intNonZero("delivered_at_us", ev.DeliveredAt.Microseconds())
	}
	if delivered != nil {
		e.bytes("delivered", delivered)
	}
	switch {
	case ev.Fate == observe.Delivered && ev.DeliveredHasID == ev.HasID && bytes.Equal(ev.DeliveredID, ev.ID):
	case ev.DeliveredHasID:
		e.bytes("delivered_id", ev.DeliveredID)
	case ev.Fate == observe.Delivered:
		e.flag("delivered_no_id", true)
	}
	if ev.DeliveredHasRetry {
		e.int("delivered_retry", ev.DeliveredRetry)
	}
	e.intNonZero("copies", int64(ev.Copies))
	e.flag("corrupted", ev.Corrupted)
	e.close()
}

func refEncodeEnd(e *refEnc, end *observe.End) {
	e.object("end")
	e.str("cause", end.Cause.String())
	refEncodeMessages(e, end.Messages)
	e.strNonEmpty("error", end.Error)
	e.close()
}
