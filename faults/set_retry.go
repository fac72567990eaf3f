package faults

// setRetryKind adds or replaces the retry field of matching events (every
// matching event, so pair it with a selector such as priming = true). On
// an event that strip-retry also hits, the new value wins.
var setRetryKind = kindDef{
	name: "set-retry", target: onEvent, params: []string{"retry"},
	summary: "adds or replaces the retry field of matching events",
	build: func(a *args) any {
		a.require("retry", "a duration such as \"2s\"")
		return setRetryEffect{ms: a.duration("retry", 0).Milliseconds()}
	},
}

type setRetryEffect struct{ ms int64 }

func (setRetryEffect) applies(*Event, *streamState) bool { return true }

func (s setRetryEffect) event(_ *Event, _ *rng, a *EventAction) {
	if !a.HasSetRetry {
		a.SetRetry, a.HasSetRetry = s.ms, true
		a.StripRetry = false // a new value wins over strip-retry
	}
}
