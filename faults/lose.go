package faults

// loseKind acts out a dying connection, once per stream: after
// after_events matching events (default 0) have gone through, the next
// `events` events of the stream (default 1, whatever they are) are
// swallowed as if lost in flight, then the client's side is closed. The
// server believes them delivered, so only a resume with Last-Event-ID and
// a replay bring them back.
var loseKind = kindDef{
	name: "lose", target: onStream, once: true, params: []string{"after_events", "events"},
	summary: "swallows the next N events after some have passed, then closes the client's side",
	build: func(a *args) any {
		return loseEffect{
			after:  int(a.integer("after_events", 0, 0, 1<<31-1)),
			events: int(a.integer("events", 1, 1, 1<<20)),
		}
	},
}

type loseEffect struct{ after, events int }

func (l loseEffect) applies(_ *Event, st *streamState) bool {
	st.seen++
	return st.seen == l.after+1
}

func (l loseEffect) event(_ *Event, _ *rng, a *EventAction) {
	if a.Close == CloseNone && a.Lose == 0 {
		a.Lose = l.events
	}
}
