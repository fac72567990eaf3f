package faults

import "github.com/frayproxy/fray/mcp"

// bufferKind holds events back and releases them in bursts, as a reverse
// proxy that buffers responses does: each matching event is held until
// events (a count) or bytes (a size) have gathered, and the event that
// fills the buffer goes out with every held one before it, in order. An
// event the selector does not match, and the stream's end, release what
// is held too, so that nothing is lost, only late. Give one of events and
// bytes.
//
//	events = 4      three events held, the fourth releases all four
//	bytes = 4096    events held until 4096 bytes have gathered
var bufferKind = Kind{
	Name: "buffer", On: OnStream, Params: []string{"events", "bytes"},
	Summary: "holds events and releases them in bursts of events or bytes, as a buffering proxy does",
	// WithholdsEvents: on a stream that neither ends nor fills the
	// buffer, what is held never reaches the client.
	Traits: Delays | WithholdsEvents,
	Build: func(a *Args) Effect {
		switch key := a.OneOf("events", "bytes"); key {
		case "events":
			return Effect{Event: bufferEffect{events: int(a.Int(key, 2, 2, 1<<20))}}
		case "bytes":
			return Effect{Event: bufferEffect{bytes: int(a.Int(key, 1, 1, 1<<30))}}
		}
		return Effect{}
	},
}

// bufferEffect decides, event by event, whether the event is held (Applies
// true) or goes out with what is held (false).
type bufferEffect struct{ events, bytes int }

var _ EventEffect = bufferEffect{}

// Applies counts ev into the buffer and reports whether it is held: false
// for the event that fills the buffer, which empties it.
func (b bufferEffect) Applies(ev *mcp.Event, st *StreamState) bool {
	if b.events > 0 {
		st.Seen++
		if st.Seen < b.events {
			return true
		}
		st.Seen = 0
		return false
	}
	st.Held += len(ev.Raw)
	if st.Held < b.bytes {
		return true
	}
	st.Held = 0
	return false
}

func (bufferEffect) Event(_ *mcp.Event, _ *Rand, a *EventAction) { a.Buffer = true }
