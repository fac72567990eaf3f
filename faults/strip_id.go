package faults

import "github.com/frayproxy/fray/proxy/mcp"

// stripIDKind removes the id field from matching events that have one.
var stripIDKind = Kind{
	Name: "strip-id", On: OnEvent,
	Summary: "removes the id field from matching events that have one",
	Traits:  HidesIDs,
	Build:   func(*Args) Effect { return Effect{Event: stripIDEffect{}} },
}

type stripIDEffect struct{}

func (stripIDEffect) Applies(ev *mcp.Event, _ *StreamState) bool  { return ev.HasID }
func (stripIDEffect) Event(_ *mcp.Event, _ *Rand, a *EventAction) { a.StripID = true }
