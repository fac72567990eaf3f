package faults

import (
	"time"

	"github.com/frayproxy/fray/proxy/mcp"
)

// delayKind holds matching events (and the stream behind them) for delay
// plus a uniform draw from [0, jitter].
var delayKind = Kind{
	Name: "delay", On: OnEvent, Params: []string{"delay", "jitter"},
	Summary: "holds matching events for delay plus up to jitter",
	Traits:  Delays,
	Build: func(a *Args) Effect {
		a.Require("delay", "a duration such as \"250ms\"")
		return Effect{Event: delayEffect{base: a.Duration("delay", 0), jitter: a.Duration("jitter", 0)}}
	},
}

type delayEffect struct{ base, jitter time.Duration }

func (delayEffect) Applies(*mcp.Event, *StreamState) bool { return true }

func (d delayEffect) Event(_ *mcp.Event, r *Rand, a *EventAction) {
	a.Delay += d.base + r.UpTo(d.jitter)
}
