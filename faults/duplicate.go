package faults

// duplicateKind writes matching events again, copies extra times (default
// 1), as a replay racing a live write does.
var duplicateKind = kindDef{
	name: "duplicate", target: onEvent, params: []string{"copies"},
	summary: "writes matching events copies extra times (default 1)",
	build: func(a *args) any {
		return duplicateEffect{copies: int(a.integer("copies", 1, 1, 100))}
	},
}

type duplicateEffect struct{ copies int }

func (duplicateEffect) applies(*Event, *streamState) bool { return true }

func (d duplicateEffect) event(_ *Event, _ *rng, a *EventAction) { a.Duplicate += d.copies }
