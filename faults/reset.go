package faults

import "github.com/frayproxy/fray/proxy/mcp"

// resetKind aborts the client's connection with a TCP RST, once, by the
// same triggers as close. A reset cannot follow a written event, so it
// takes the place of the next one:
//
//	after_events = N      instead of the (N+1)th matching event
//	                      (0: at the stream's start)
//	after = "5s"          at the first event that long after the start
//	after_priming = true  at the first event after the priming event
//	before_response=true  instead of the first JSON-RPC response
var resetKind = Kind{
	Name: "reset", On: OnStream, Once: true, OwnsAfter: true, Params: holdKeys,
	Summary: "aborts the connection with a TCP RST at an event, by the same triggers as close",
	Traits:  EndsStream,
	Build: func(a *Args) Effect {
		t := readTrigger(a)
		hold := readHold(a, t, false)
		switch {
		case t.mode == trigNone:
			return Effect{}
		case t.atStart():
			return Effect{Start: closeStart{mode: CloseReset}}
		}
		return Effect{Event: resetEvent{t: t, hold: hold}, Traits: holdTraits(hold)}
	},
}

type resetEvent struct {
	t    trigger
	hold bool
}

func (r resetEvent) Applies(ev *mcp.Event, st *StreamState) bool {
	switch r.t.mode {
	case trigEvents:
		st.Seen++
		return st.Seen == r.t.n+1
	case trigAfter:
		return ev.SinceStream >= r.t.after
	case trigPriming:
		if st.Primed {
			return true
		}
		st.Primed = ev.Priming
		return false
	default:
		return ev.RPCKind.Answers()
	}
}

func (r resetEvent) Event(_ *mcp.Event, _ *Rand, a *EventAction) {
	if a.Close == CloseNone {
		a.Close, a.Hold = CloseReset, r.hold
	}
}
