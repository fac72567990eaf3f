package faults

// rewriteIDKind replaces the id of matching events that have one. The id
// parameter is a template: "{id}" stands for the original id, so "{id}-x"
// appends to it and "stale" replaces every id with a fixed value.
var rewriteIDKind = kindDef{
	name: "rewrite-id", target: onEvent, params: []string{"id"},
	summary: "replaces the id of matching events; \"{id}\" in the template is the original id",
	build: func(a *args) any {
		a.require("id", "a template such as \"{id}-x\" or a fixed id")
		return rewriteIDEffect{t: parseIDTemplate(a, "id")}
	},
}

type rewriteIDEffect struct{ t idTemplate }

func (rewriteIDEffect) applies(ev *Event, _ *streamState) bool { return ev.HasID }

func (e rewriteIDEffect) event(ev *Event, _ *rng, a *EventAction) {
	if a.RewriteID == nil {
		a.RewriteID = e.t.expand(ev.ID)
	}
}
