package faults

import "time"

// latencyKind delays the response to matching requests by delay plus a
// uniform draw from [0, jitter]; the request is forwarded after the wait.
var latencyKind = kindDef{
	name: "latency", target: onExchange, params: []string{"delay", "jitter"},
	summary: "delays matching exchanges by delay plus up to jitter",
	build: func(a *args) any {
		a.require("delay", "a duration such as \"250ms\"")
		return latencyEffect{base: a.duration("delay", 0), jitter: a.duration("jitter", 0)}
	},
}

type latencyEffect struct{ base, jitter time.Duration }

func (latencyEffect) applies(*Exchange) bool { return true }

func (l latencyEffect) exchange(_ *Exchange, r *rng, a *ExchangeAction) {
	a.Latency += l.base + r.upTo(l.jitter)
}
