package faults

import "github.com/frayproxy/fray/proxy/mcp"

// rewriteLastEventIDKind changes the Last-Event-ID of matching requests.
// id is a template like rewrite-id's: with "{id}" it rewrites requests
// that carry the header ("{id}-x"); a fixed value ("stale-1") is set on
// every matching request, with or without the header, so a fresh GET can
// be made to resume from an id the server never issued.
var rewriteLastEventIDKind = Kind{
	Name: "rewrite-last-event-id", On: OnExchange, Params: []string{"id"},
	Summary: "replaces or sets Last-Event-ID; \"{id}\" in the template is the client's id",
	Traits:  ChangesLastEventID,
	Build: func(a *Args) Effect {
		a.Require("id", "a template such as \"{id}-x\" or a fixed id")
		return Effect{Exchange: rewriteLastEventIDEffect{t: parseIDTemplate(a, "id")}}
	},
}

type rewriteLastEventIDEffect struct{ t idTemplate }

func (e rewriteLastEventIDEffect) Applies(ex *mcp.Exchange) bool {
	return !e.t.uses || hasLastEventID(ex)
}

func (e rewriteLastEventIDEffect) Exchange(ex *mcp.Exchange, _ *Rand, a *ExchangeAction) {
	if a.HasLastEventID {
		return
	}
	old := ""
	if v := ex.Header[mcp.HeaderLastEventID]; len(v) > 0 {
		old = v[0]
	}
	a.SetLastEventID, a.HasLastEventID = string(e.t.expand([]byte(old))), true
}
