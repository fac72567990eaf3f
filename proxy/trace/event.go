package trace

import (
	"encoding/base64"
	"strconv"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// appendEvent appends the event member of an observation, the most of a
// trace, with each member's name and punctuation as one constant: the
// event is never the first member of its observation, nor any member of
// the event but its index the first of the event.
//
// What a reader finds again is left out (format 4): the message member of
// an event written as raw_parts whose JSON-RPC identity the proxy scanned
// from its data (Scanned), which the reader scans again in the JSON the
// line holds; and for an event delivered at, the time it was read, when
// it left then, and its id when the client got the event's own.
func appendEvent(b []byte, ev *observe.Event, at time.Duration, red *redactor) []byte {
	raw, block := ev.Raw, ev.Delivered
	if string(ev.Type) == "endpoint" {
		// A legacy endpoint's URL carries the session id in its query.
		raw = red.endpoint(raw)
		if block != nil {
			block = red.endpoint(block)
		}
	}
	b = append(b, `,"event":{"index":`...)
	b = strconv.AppendInt(b, int64(ev.Index), 10)
	b, parts := appendRaw(b, ev, raw)
	if ev.Parsed {
		b = append(b, `,"parsed":true`...)
	}
	if len(ev.Type) > 0 {
		b = appendBytesAs(b, `,"type":`, `,"type_b64":"`, ev.Type)
	}
	if ev.HasID {
		b = appendBytesAs(b, `,"id":`, `,"id_b64":"`, ev.ID)
	}
	if ev.HasRetry {
		b = append(b, `,"retry":`...)
		b = strconv.AppendInt(b, ev.Retry, 10)
	}
	if ev.Priming {
		b = append(b, `,"priming":true`...)
	}
	if ev.Dispatched {
		b = append(b, `,"dispatched":true`...)
	}
	if (ev.RPCKind != 0 || len(ev.RPCMethod) > 0 || len(ev.RPCID) > 0) && !(parts && ev.Scanned) {
		b = append(b, `,"message":{"kind":`...)
		b = appendName(b, ev.RPCKind.String())
		if len(ev.RPCMethod) > 0 {
			b = appendBytesAs(b, `,"method":`, `,"method_b64":"`, ev.RPCMethod)
		}
		if len(ev.RPCID) > 0 {
			b = appendBytesAs(b, `,"id":`, `,"id_b64":"`, ev.RPCID)
		}
		b = append(b, '}')
	}
	b = append(b, `,"fate":`...)
	b = appendName(b, ev.Fate.String())
	delivered := ev.Fate == observe.Delivered
	if dat := ev.DeliveredAt.Microseconds(); delivered && dat != at.Microseconds() || !delivered && dat != 0 {
		b = append(b, `,"delivered_at_us":`...)
		b = strconv.AppendInt(b, dat, 10)
	}
	if block != nil {
		b = appendBytesAs(b, `,"delivered":`, `,"delivered_b64":"`, block)
	}
	switch {
	case delivered && ev.DeliveredHasID == ev.HasID && string(ev.DeliveredID) == string(ev.ID):
		// The client got the event's own id, or none as it had none.
	case ev.DeliveredHasID:
		b = appendBytesAs(b, `,"delivered_id":`, `,"delivered_id_b64":"`, ev.DeliveredID)
	case delivered:
		b = append(b, `,"delivered_no_id":true`...)
	}
	if ev.DeliveredHasRetry {
		b = append(b, `,"delivered_retry":`...)
		b = strconv.AppendInt(b, ev.DeliveredRetry, 10)
	}
	if ev.Copies != 0 {
		b = append(b, `,"copies":`...)
		b = strconv.AppendInt(b, int64(ev.Copies), 10)
	}
	if ev.Corrupted {
		b = append(b, `,"corrupted":true`...)
	}
	return append(b, '}')
}

// appendName appends v, one of the names of an enumeration, as a JSON
// string: those names are plain ASCII, which needs no escape
// (TestNamesArePlain).
func appendName(b []byte, v string) []byte {
	b = append(b, '"')
	b = append(b, v...)
	return append(b, '"')
}

// appendBytesAs appends v, a member that is not the first of its object,
// as a JSON string when it is valid UTF-8 and as standard base64 under the
// name with "_b64" added otherwise, so that no byte is lost. m and m64 are
// the text that begins the member in each form: `,"k":` and `,"k_b64":"`.
func appendBytesAs(b []byte, m, m64 string, v []byte) []byte {
	start := len(b)
	b, ok := appendValidString(append(b, m...), v)
	if ok {
		return b
	}
	b = append(b[:start], m64...)
	b = base64.StdEncoding.AppendEncode(b, v)
	return append(b, '"')
}

// appendRaw appends the raw member of ev, whose block is raw: as raw_parts
// when rawParts finds its data's JSON in it, otherwise as raw (or
// raw_b64). raw_parts writes the message as it came, sparing the escape
// of every quote of its JSON. It reports whether it wrote raw_parts.
func appendRaw(b []byte, ev *observe.Event, raw []byte) ([]byte, bool) {
	if from, to, ok := rawParts(ev, raw); ok {
		start := len(b)
		b, ok = appendValidString(append(b, `,"raw_parts":[`...), raw[:from])
		if ok {
			b = append(append(append(b, ','), raw[from:to]...), ',')
			if b, ok = appendValidString(b, raw[to:]); ok {
				return append(b, ']'), true
			}
		}
		b = b[:start] // the text around the JSON is not UTF-8
	}
	return appendBytesAs(b, `,"raw":`, `,"raw_b64":"`, raw), false
}

// rawParts finds, in raw, the JSON of a message the event's data holds,
// so that raw can be written as the text before it, the JSON as it came,
// and the text after it: raw[:from], raw[from:to], raw[to:]. It does when
// the data was classified as JSON-RPC (so it is JSON: jsonrpc.Scan said
// so), lies in raw as one piece (one data line), is an object or an
// array, and is all ASCII: a trace line must be UTF-8, and escapes
// U+2028 and U+2029, which ASCII rules out at the cost of one pass over
// the JSON (isASCII).
func rawParts(ev *observe.Event, raw []byte) (from, to int, ok bool) {
	d := ev.Data
	if ev.RPCKind == mcp.RPCNone || !ev.Parsed || !ev.Dispatched || len(d) == 0 || len(d) > len(raw) {
		return 0, 0, false
	}
	// Only the addresses are compared; nothing is read through them.
	off := uintptr(unsafe.Pointer(unsafe.SliceData(d))) - uintptr(unsafe.Pointer(unsafe.SliceData(raw)))
	if off > uintptr(len(raw)-len(d)) {
		return 0, 0, false
	}
	from, to = int(off), int(off)+len(d)
	// A data line holds no line end; the JSON may have blanks around it,
	// which go with the text around it.
	for from < to && (raw[from] == ' ' || raw[from] == '\t') {
		from++
	}
	for to > from && (raw[to-1] == ' ' || raw[to-1] == '\t') {
		to--
	}
	if to-from < 2 || !(raw[from] == '{' && raw[to-1] == '}' || raw[from] == '[' && raw[to-1] == ']') || !isASCII(raw[from:to]) {
		return 0, 0, false
	}
	return from, to, true
}

// isASCII reports whether every byte of s is below 0x80.
func isASCII(s []byte) bool {
	for _, c := range s {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
