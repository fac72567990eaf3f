package faults

import "github.com/frayproxy/fray/proxy/mcp"

// setRetryKind adds or replaces the retry field of matching events (every
// matching event, so pair it with a selector such as priming = true). On
// an event that strip-retry also hits, the new value wins.
var setRetryKind = Kind{
	Name: "set-retry", On: OnEvent, Params: []string{"retry"},
	Summary: "adds or replaces the retry field of matching events",
	Traits:  ChangesRetry,
	Build: func(a *Args) Effect {
		a.Require("retry", "a duration such as \"2s\"")
		return Effect{Event: setRetryEffect{ms: a.Duration("retry", 0).Milliseconds()}}
	},
}

type setRetryEffect struct{ ms int64 }

func (setRetryEffect) Applies(*mcp.Event, *StreamState) bool { return true }

func (s setRetryEffect) Event(_ *mcp.Event, _ *Rand, a *EventAction) {
	if !a.HasSetRetry {
		a.SetRetry, a.HasSetRetry = s.ms, true
		a.StripRetry = false // a new value wins over strip-retry
	}
}
