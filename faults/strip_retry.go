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

// event leaves the retry alone when set-retry already replaced it on this
// event: a new value wins over removal.
func (stripRetryEffect) event(_ *Event, _ *rng, a *EventAction) { a.StripRetry = !a.HasSetRetry }
