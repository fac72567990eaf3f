package faults

// dropKind keeps matching events from the client, as if the server never
// sent them.
var dropKind = kindDef{
	name: "drop", target: onEvent,
	summary: "keeps matching events from the client",
	build:   func(*args) any { return dropEffect{} },
}

type dropEffect struct{}

func (dropEffect) applies(*Event, *streamState) bool      { return true }
func (dropEffect) event(_ *Event, _ *rng, a *EventAction) { a.Drop = true }
