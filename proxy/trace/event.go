package trace

import (
	"encoding/base64"

	"github.com/frayproxy/fray/proxy/observe"
)

// appendEvent appends the event member of an observation, the most of a
// trace, with each member's name and punctuation as one constant: the
// event is never the first member of its observation, nor any member of
// the event but its index the first of the event. It works on b alone,
// which stays in a register, rather than through the encoder.
//
// The pieces appended on their own are 16 bytes at most: the compiler
// copies a constant that short with a few moves, and calls memmove for a
// longer one. (Those passed to appendBytesAs are left whole.)
func appendEvent(b []byte, ev *observe.Event, red *redactor) []byte {
	raw, delivered := ev.Raw, ev.Delivered
	if string(ev.Type) == "endpoint" {
		// A legacy endpoint's URL carries the session id in its query.
		raw = red.endpoint(raw)
		if delivered != nil {
			delivered = red.endpoint(delivered)
		}
	}
	b = append(b, `,"event":{`...)
	b = append(b, `"index":`...)
	b = appendInt(b, int64(ev.Index))
	b = appendBytesAs(b, `,"raw":`, `,"raw_b64":"`, raw)
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
		b = appendInt(b, ev.Retry)
	}
	if ev.Priming {
		b = append(b, `,"priming":true`...)
	}
	if ev.Dispatched {
		b = append(b, `,"dispatched":`...)
		b = append(b, `true`...)
	}
	if ev.RPCKind != 0 || len(ev.RPCMethod) > 0 || len(ev.RPCID) > 0 {
		b = append(b, `,"message":{`...)
		b = append(b, `"kind":`...)
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
	if at := ev.DeliveredAt.Microseconds(); at != 0 {
		b = append(b, `,"delivered_at`...)
		b = append(b, `_us":`...)
		b = appendInt(b, at)
	}
	if delivered != nil {
		b = appendBytesAs(b, `,"delivered":`, `,"delivered_b64":"`, delivered)
	}
	if ev.DeliveredHasID {
		b = appendBytesAs(b, `,"delivered_id":`, `,"delivered_id_b64":"`, ev.DeliveredID)
	}
	if ev.DeliveredHasRetry {
		b = append(b, `,"delivered_`...)
		b = append(b, `retry":`...)
		b = appendInt(b, ev.DeliveredRetry)
	}
	if ev.Copies != 0 {
		b = append(b, `,"copies":`...)
		b = appendInt(b, int64(ev.Copies))
	}
	if ev.Corrupted {
		b = append(b, `,"corrupted":`...)
		b = append(b, `true`...)
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
