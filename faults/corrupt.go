package faults

// corruptKind breaks the JSON in the data of matching events that carry a
// JSON-RPC message; the pump decides how (truncation, a stray byte).
var corruptKind = kindDef{
	name: "corrupt", target: onEvent,
	summary: "breaks the JSON in the data of matching JSON-RPC events",
	build:   func(*args) any { return corruptEffect{} },
}

type corruptEffect struct{}

func (corruptEffect) applies(ev *Event, _ *streamState) bool { return ev.RPCKind != RPCNone }
func (corruptEffect) event(_ *Event, _ *rng, a *EventAction) { a.Corrupt = true }
