package faults

import "time"

// delayKind holds matching events (and the stream behind them) for delay
// plus a uniform draw from [0, jitter].
var delayKind = kindDef{
	name: "delay", target: onEvent, params: []string{"delay", "jitter"},
	summary: "holds matching events for delay plus up to jitter",
	build: func(a *args) any {
		a.require("delay", "a duration such as \"250ms\"")
		return delayEffect{base: a.duration("delay", 0), jitter: a.duration("jitter", 0)}
	},
}

type delayEffect struct{ base, jitter time.Duration }

func (delayEffect) applies(*Event, *streamState) bool { return true }

func (d delayEffect) event(_ *Event, r *rng, a *EventAction) {
	a.Delay += d.base + r.upTo(d.jitter)
}
