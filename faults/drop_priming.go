package faults

import "github.com/frayproxy/fray/proxy/mcp"

// dropPrimingKind drops priming events (an id with empty data, SEP-1699),
// so the client has no id to resume from until a later event brings one.
var dropPrimingKind = Kind{
	Name: "drop-priming", On: OnEvent,
	Summary: "drops priming events (an id and empty data)",
	Traits:  WithholdsEvents | HidesIDs,
	Build:   func(*Args) Effect { return Effect{Event: dropPrimingEffect{}} },
}

type dropPrimingEffect struct{}

func (dropPrimingEffect) Applies(ev *mcp.Event, _ *StreamState) bool  { return ev.Priming }
func (dropPrimingEffect) Event(_ *mcp.Event, _ *Rand, a *EventAction) { a.Drop = true }
