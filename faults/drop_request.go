package faults

// dropRequestKind swallows matching requests: they never reach the server.
// The client is answered 202 Accepted, or with hang = true left waiting
// until it gives up.
var dropRequestKind = kindDef{
	name: "drop-request", target: onExchange, params: []string{"hang"},
	summary: "never forwards matching requests; answers 202, or hangs with hang = true",
	build: func(a *args) any {
		return dropRequestEffect{hang: a.boolean("hang", false)}
	},
}

type dropRequestEffect struct{ hang bool }

func (dropRequestEffect) applies(*Exchange) bool { return true }

func (d dropRequestEffect) exchange(_ *Exchange, _ *rng, a *ExchangeAction) {
	a.DropRequest = true
	a.Hang = a.Hang || d.hang
}
