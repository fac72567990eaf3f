package faults

// stripIDKind removes the id field from matching events that have one.
var stripIDKind = kindDef{
	name: "strip-id", target: onEvent,
	summary: "removes the id field from matching events that have one",
	build:   func(*args) any { return stripIDEffect{} },
}

type stripIDEffect struct{}

func (stripIDEffect) applies(ev *Event, _ *streamState) bool { return ev.HasID }
func (stripIDEffect) event(_ *Event, _ *rng, a *EventAction) { a.StripID = true }
