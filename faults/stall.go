package faults

import "time"

// stallKind stops the stream, once, before the first event that matches
// the selector (use nth or stream_after to place it): for duration, or for
// good with forever = true, the connection staying open.
var stallKind = kindDef{
	name: "stall", target: onStream, once: true, params: []string{"duration", "forever"},
	summary: "stops sending before the first matching event, for a duration or for ever",
	build: func(a *args) any {
		switch key := a.oneOf("duration", "forever"); key {
		case "duration":
			return stallEffect{d: a.duration(key, 0)}
		case "forever":
			if !a.boolean(key, false) {
				a.fail(key, ErrRange, "forever = false stalls nothing; give duration instead")
			}
			return stallEffect{forever: true}
		}
		return nil
	},
}

type stallEffect struct {
	d       time.Duration
	forever bool
}

func (stallEffect) applies(*Event, *streamState) bool { return true }

func (s stallEffect) event(_ *Event, _ *rng, a *EventAction) {
	a.Stall += s.d
	a.StallForever = a.StallForever || s.forever
}
