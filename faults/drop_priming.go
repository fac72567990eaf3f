package faults

// dropPrimingKind drops priming events (an id with empty data, SEP-1699),
// so the client has no id to resume from until a later event brings one.
var dropPrimingKind = kindDef{
	name: "drop-priming", target: onEvent,
	summary: "drops priming events (an id and empty data)",
	build:   func(*args) any { return dropPrimingEffect{} },
}

type dropPrimingEffect struct{}

func (dropPrimingEffect) applies(ev *Event, _ *streamState) bool { return ev.Priming }
func (dropPrimingEffect) event(_ *Event, _ *rng, a *EventAction) { a.Drop = true }
