package faults

import (
	"time"

	"github.com/frayproxy/fray/proxy/mcp"
)

// latencyKind delays the response to matching requests by delay plus a
// uniform draw from [0, jitter]; the request is forwarded after the wait.
var latencyKind = Kind{
	Name: "latency", On: OnExchange, Params: []string{"delay", "jitter"},
	Summary: "delays matching exchanges by delay plus up to jitter",
	Traits:  Delays,
	Build: func(a *Args) Effect {
		a.Require("delay", "a duration such as \"250ms\"")
		return Effect{Exchange: latencyEffect{base: a.Duration("delay", 0), jitter: a.Duration("jitter", 0)}}
	},
}

type latencyEffect struct{ base, jitter time.Duration }

func (latencyEffect) Applies(*mcp.Exchange) bool { return true }

func (l latencyEffect) Exchange(_ *mcp.Exchange, r *Rand, a *ExchangeAction) {
	a.Latency += l.base + r.UpTo(l.jitter)
}
