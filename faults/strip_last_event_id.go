package faults

import "github.com/frayproxy/fray/proxy/mcp"

// stripLastEventIDKind removes Last-Event-ID from matching requests that
// carry it, so the server cannot replay what the client missed.
var stripLastEventIDKind = Kind{
	Name: "strip-last-event-id", On: OnExchange,
	Summary: "removes Last-Event-ID from matching requests that carry one",
	Traits:  ChangesLastEventID,
	Build:   func(*Args) Effect { return Effect{Exchange: stripLastEventIDEffect{}} },
}

type stripLastEventIDEffect struct{}

func (stripLastEventIDEffect) Applies(ex *mcp.Exchange) bool { return hasLastEventID(ex) }

func (stripLastEventIDEffect) Exchange(_ *mcp.Exchange, _ *Rand, a *ExchangeAction) {
	a.StripLastEventID = true
}

func hasLastEventID(ex *mcp.Exchange) bool {
	return len(ex.Header[mcp.HeaderLastEventID]) > 0
}
