package faults

// stripRetryKind removes the retry field from matching events that carry
// one; events without one are left alone and do not count as firings.
var stripRetryKind = kindDef{
	name: "strip-retry", target: onEvent,
	summary: "removes the retry field from matching events that have one",
	build:   func(*args) any { return stripRetryEffect{} },
}

type stripRetryEffect struct{}

func (stripRetryEffect) applies(ev *Event, _ *streamState) bool { return ev.HasRetry }
func (stripRetryEffect) event(_ *Event, _ *rng, a *EventAction) { a.StripRetry = true }
