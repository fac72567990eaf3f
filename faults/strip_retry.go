package faults

import "github.com/frayproxy/fray/proxy/mcp"

// stripRetryKind removes the retry field from matching events that carry
// one; events without one are left alone and do not count as firings.
var stripRetryKind = Kind{
	Name: "strip-retry", On: OnEvent,
	Summary: "removes the retry field from matching events that have one",
	Traits:  ChangesRetry,
	Build:   func(*Args) Effect { return Effect{Event: stripRetryEffect{}} },
}

type stripRetryEffect struct{}

func (stripRetryEffect) Applies(ev *mcp.Event, _ *StreamState) bool { return ev.HasRetry }

// event leaves the retry alone when set-retry already replaced it on this
// event: a new value wins over removal.
func (stripRetryEffect) Event(_ *mcp.Event, _ *Rand, a *EventAction) { a.StripRetry = !a.HasSetRetry }
