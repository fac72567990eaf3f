package faults

import (
	"time"

	"github.com/frayproxy/fray/proxy/mcp"
)

// stallKind stops the stream, once, before the first event that matches
// the selector (use nth or stream_after to place it): for duration, or for
// good with forever = true, the connection staying open.
var stallKind = Kind{
	Name: "stall", On: OnStream, Once: true, Params: []string{"duration", "forever"},
	Summary: "stops sending before the first matching event, for a duration or for ever",
	Traits:  Delays | HoldsStream,
	Build: func(a *Args) Effect {
		switch key := a.OneOf("duration", "forever"); key {
		case "duration":
			return Effect{Event: stallEffect{d: a.Duration(key, 0)}, Traits: Delays}
		case "forever":
			if !a.Bool(key, false) {
				a.Fail(key, ErrRange, "forever = false stalls nothing; give duration instead")
			}
			return Effect{Event: stallEffect{forever: true}, Traits: HoldsStream}
		}
		return Effect{}
	},
}

type stallEffect struct {
	d       time.Duration
	forever bool
}

func (stallEffect) Applies(*mcp.Event, *StreamState) bool { return true }

func (s stallEffect) Event(_ *mcp.Event, _ *Rand, a *EventAction) {
	a.Stall += s.d
	a.StallForever = a.StallForever || s.forever
}
