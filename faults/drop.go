package faults

import "github.com/frayproxy/fray/proxy/mcp"

// dropKind keeps matching events from the client, as if the server never
// sent them.
var dropKind = Kind{
	Name: "drop", On: OnEvent,
	Summary: "keeps matching events from the client",
	Traits:  WithholdsEvents,
	Build:   func(*Args) Effect { return Effect{Event: dropEffect{}} },
}

type dropEffect struct{}

func (dropEffect) Applies(*mcp.Event, *StreamState) bool       { return true }
func (dropEffect) Event(_ *mcp.Event, _ *Rand, a *EventAction) { a.Drop = true }
