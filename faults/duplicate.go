package faults

import "github.com/frayproxy/fray/proxy/mcp"

// duplicateKind writes matching events again, copies extra times (default
// 1), as a replay racing a live write does.
var duplicateKind = Kind{
	Name: "duplicate", On: OnEvent, Params: []string{"copies"},
	Summary: "writes matching events copies extra times (default 1)",
	Traits:  Duplicates,
	Build: func(a *Args) Effect {
		return Effect{Event: duplicateEffect{copies: int(a.Int("copies", 1, 1, 100))}}
	},
}

type duplicateEffect struct{ copies int }

func (duplicateEffect) Applies(*mcp.Event, *StreamState) bool { return true }

func (d duplicateEffect) Event(_ *mcp.Event, _ *Rand, a *EventAction) { a.Duplicate += d.copies }
