package faults

// rewriteLastEventIDKind changes the Last-Event-ID of matching requests.
// id is a template like rewrite-id's: with "{id}" it rewrites requests
// that carry the header ("{id}-x"); a fixed value ("stale-1") is set on
// every matching request, with or without the header, so a fresh GET can
// be made to resume from an id the server never issued.
var rewriteLastEventIDKind = kindDef{
	name: "rewrite-last-event-id", target: onExchange, params: []string{"id"},
	summary: "replaces or sets Last-Event-ID; \"{id}\" in the template is the client's id",
	build: func(a *args) any {
		a.require("id", "a template such as \"{id}-x\" or a fixed id")
		return rewriteLastEventIDEffect{t: parseIDTemplate(a, "id")}
	},
}

type rewriteLastEventIDEffect struct{ t idTemplate }

func (e rewriteLastEventIDEffect) applies(ex *Exchange) bool {
	return !e.t.uses || hasLastEventID(ex)
}

func (e rewriteLastEventIDEffect) exchange(ex *Exchange, _ *rng, a *ExchangeAction) {
	if a.HasLastEventID {
		return
	}
	old := ""
	if v := ex.Header["Last-Event-Id"]; len(v) > 0 {
		old = v[0]
	}
	a.SetLastEventID, a.HasLastEventID = string(e.t.expand([]byte(old))), true
}
