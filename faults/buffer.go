package faults

import (
	"strings"

	"github.com/frayproxy/fray/proxy/mcp"
)

// bufferKind holds events back and releases them in bursts, as a reverse
// proxy that buffers responses does: each matching event is held until
// events (a count) or bytes (a size) have gathered, and the event that
// fills the buffer goes out with every held one before it, in order. An
// event the selector does not match, and the stream's end, release what
// is held too, so that nothing is lost, only late. Give one of events and
// bytes. A stream whose response carries X-Accel-Buffering: no is not
// buffered, as nginx honours that header, unless honour_no_buffering is
// false.
//
//	events = 4      three events held, the fourth releases all four
//	bytes = 4096    events held until 4096 bytes have gathered
//	honour_no_buffering = false   buffer even what the server asked not to
var bufferKind = Kind{
	Name: "buffer", On: OnStream, Params: []string{"events", "bytes", "honour_no_buffering"},
	Summary: "holds events and releases them in bursts of events or bytes, as a buffering proxy does",
	// WithholdsEvents: on a stream that neither ends nor fills the
	// buffer, what is held never reaches the client.
	Traits: Delays | WithholdsEvents,
	Build: func(a *Args) Effect {
		honour := a.Bool("honour_no_buffering", true)
		switch key := a.OneOf("events", "bytes"); key {
		case "events":
			return Effect{Event: bufferEffect{events: int(a.Int(key, 2, 2, 1<<20)), honour: honour}}
		case "bytes":
			return Effect{Event: bufferEffect{bytes: int(a.Int(key, 1, 1, 1<<30)), honour: honour}}
		}
		return Effect{}
	},
}

// bufferEffect decides, event by event, whether the event is held (Applies
// true) or goes out with what is held (false).
type bufferEffect struct {
	events, bytes int
	honour        bool // leave alone a stream whose response asks for no buffering
}

var _ StreamKeeper = bufferEffect{}

// Keeps reports whether the stream is buffered: not when the server asked
// for no buffering and the fault honours it.
func (b bufferEffect) Keeps(ex *mcp.Exchange) bool {
	return !b.honour || !strings.EqualFold(strings.TrimSpace(ex.Response.Get("X-Accel-Buffering")), "no")
}

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
