package faults

import "github.com/frayproxy/fray/proxy/mcp"

// corruptKind breaks the JSON in the data of matching events that carry a
// JSON-RPC message; the pump decides how (truncation, a stray byte).
var corruptKind = Kind{
	Name: "corrupt", On: OnEvent,
	Summary: "breaks the JSON in the data of matching JSON-RPC events",
	Traits:  Corrupts,
	Build:   func(*Args) Effect { return Effect{Event: corruptEffect{}} },
}

type corruptEffect struct{}

func (corruptEffect) Applies(ev *mcp.Event, _ *StreamState) bool {
	return ev.RPCKind != mcp.RPCNone
}
func (corruptEffect) Event(_ *mcp.Event, _ *Rand, a *EventAction) { a.Corrupt = true }
