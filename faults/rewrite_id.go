package faults

import "github.com/frayproxy/fray/proxy/mcp"

// rewriteIDKind replaces the id of matching events that have one. The id
// parameter is a template: "{id}" stands for the original id, so "{id}-x"
// appends to it and "stale" replaces every id with a fixed value.
var rewriteIDKind = Kind{
	Name: "rewrite-id", On: OnEvent, Params: []string{"id"},
	Summary: "replaces the id of matching events; \"{id}\" in the template is the original id",
	Traits:  HidesIDs,
	Build: func(a *Args) Effect {
		a.Require("id", "a template such as \"{id}-x\" or a fixed id")
		return Effect{Event: rewriteIDEffect{t: parseIDTemplate(a, "id")}}
	},
}

type rewriteIDEffect struct{ t idTemplate }

func (rewriteIDEffect) Applies(ev *mcp.Event, _ *StreamState) bool { return ev.HasID }

func (e rewriteIDEffect) Event(ev *mcp.Event, _ *Rand, a *EventAction) {
	if a.RewriteID == nil {
		a.RewriteID = e.t.expandInto(a.ids, ev.ID)
	}
}
