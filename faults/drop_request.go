package faults

import "github.com/frayproxy/fray/proxy/mcp"

// dropRequestKind swallows matching requests: they never reach the server.
// The client is answered 202 Accepted, or with hang = true left waiting
// until it gives up.
var dropRequestKind = Kind{
	Name: "drop-request", On: OnExchange, Params: []string{"hang"},
	Summary: "never forwards matching requests; answers 202, or hangs with hang = true",
	Traits:  AnswersRequests,
	Build: func(a *Args) Effect {
		return Effect{Exchange: dropRequestEffect{hang: a.Bool("hang", false)}}
	},
}

type dropRequestEffect struct{ hang bool }

func (dropRequestEffect) Applies(*mcp.Exchange) bool { return true }

func (d dropRequestEffect) Exchange(_ *mcp.Exchange, _ *Rand, a *ExchangeAction) {
	a.DropRequest = true
	a.Hang = a.Hang || d.hang
}
