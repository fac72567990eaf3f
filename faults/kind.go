package faults

// target says what a kind acts on, and so how its probability is drawn.
type target uint8

const (
	// onExchange kinds act on an HTTP exchange before it is forwarded;
	// probability is drawn per exchange.
	onExchange target = iota + 1
	// onStream kinds act on a whole SSE stream; probability is drawn once
	// per stream and `times` counts streams.
	onStream
	// onEvent kinds act on single SSE events; probability is drawn per
	// event and `times` counts events.
	onEvent
)

var targetNames = [...]string{onExchange: "exchange", onStream: "stream", onEvent: "event"}

// kindDef is one registered fault kind.
type kindDef struct {
	name    string
	target  target
	params  []string
	summary string
	// once: the kind fires at most once per stream (it ends or stops it).
	once bool
	// ownsAfter: "after" is the kind's parameter, not the schedule.
	ownsAfter bool
	// build reads the kind's parameters and returns its effect, which
	// implements exchangeEffect, startEffect or eventEffect (or none when
	// the parameters were wrong).
	build func(a *args) any
}

// exchangeEffect is a kind that changes an exchange.
type exchangeEffect interface {
	// applies reports whether the kind has anything to do with ex.
	applies(ex *Exchange) bool
	exchange(ex *Exchange, r *rng, act *ExchangeAction)
}

// startEffect is a kind that decides once, when a stream starts.
type startEffect interface {
	start(act *StreamAction)
}

// streamState is what event effects may remember about their stream.
type streamState struct {
	// seen counts the events that matched the fault's selector before
	// this one.
	seen int
	// primed is set once a priming event went by.
	primed bool
}

// eventEffect is a kind that changes events.
type eventEffect interface {
	// applies reports whether the kind has anything to do with ev, which
	// matched the selector; it is called once per such event, in order,
	// and may update st.
	applies(ev *Event, st *streamState) bool
	event(ev *Event, r *rng, act *EventAction)
}

// KindInfo describes a registered kind, for help texts and references.
type KindInfo struct {
	// Name is the profile's `kind` value.
	Name string
	// On is "exchange", "stream" or "event".
	On string
	// Params are the kind's own keys.
	Params []string
	// Summary is one sentence on what the kind does.
	Summary string
}

// Kinds lists the registered kinds in registry order.
func Kinds() []KindInfo {
	out := make([]KindInfo, 0, len(registry))
	for _, k := range registry {
		out = append(out, KindInfo{Name: k.name, On: targetNames[k.target], Params: append([]string(nil), k.params...), Summary: k.summary})
	}
	return out
}

// SelectorKeys lists the keys any fault may use to select its traffic.
func SelectorKeys() []string { return append([]string(nil), selectorKeys...) }

func lookupKind(name string) *kindDef {
	for _, k := range registry {
		if k.name == name {
			return k
		}
	}
	return nil
}
