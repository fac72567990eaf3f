package faults

import "github.com/frayproxy/fray/proxy/mcp"

// loseKind acts out a dying connection, once per stream: after
// after_events matching events (default 0) have gone through, the next
// `events` events of the stream (default 1, whatever they are) are
// swallowed as if lost in flight, then the client's side is closed. The
// server believes them delivered, so only a resume with Last-Event-ID and
// a replay bring them back. With hold = true, fray goes on reading and
// swallowing the server's stream after it closed the client's side, until
// the client resumes (see EventAction.Hold).
var loseKind = Kind{
	Name: "lose", On: OnStream, Once: true, Params: []string{"after_events", "events", "hold"},
	Summary: "swallows the next N events after some have passed, then closes the client's side",
	Traits:  EndsStream | WithholdsEvents,
	Build: func(a *Args) Effect {
		return Effect{Event: loseEffect{
			after:  int(a.Int("after_events", 0, 0, 1<<31-1)),
			events: int(a.Int("events", 1, 1, 1<<20)),
			hold:   a.Bool("hold", false),
		}}
	},
}

type loseEffect struct {
	after, events int
	hold          bool
}

func (l loseEffect) Applies(_ *mcp.Event, st *StreamState) bool {
	st.Seen++
	return st.Seen == l.after+1
}

func (l loseEffect) Event(_ *mcp.Event, _ *Rand, a *EventAction) {
	if a.Close == CloseNone && a.Lose == 0 {
		a.Lose, a.Hold = l.events, l.hold
	}
}
