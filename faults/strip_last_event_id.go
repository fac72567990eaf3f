package faults

// stripLastEventIDKind removes Last-Event-ID from matching requests that
// carry it, so the server cannot replay what the client missed.
var stripLastEventIDKind = kindDef{
	name: "strip-last-event-id", target: onExchange,
	summary: "removes Last-Event-ID from matching requests that carry one",
	build:   func(*args) any { return stripLastEventIDEffect{} },
}

type stripLastEventIDEffect struct{}

func (stripLastEventIDEffect) applies(ex *Exchange) bool { return hasLastEventID(ex) }

func (stripLastEventIDEffect) exchange(_ *Exchange, _ *rng, a *ExchangeAction) {
	a.StripLastEventID = true
}

func hasLastEventID(ex *Exchange) bool {
	return len(ex.Header["Last-Event-Id"]) > 0
}
