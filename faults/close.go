package faults

import (
	"time"

	"github.com/frayproxy/fray/proxy/mcp"
)

// closeKind ends a stream cleanly, once, at the first of:
//
//	after_events = N      after the Nth event that matches the selector
//	                      (0: before the first event, at the stream's start)
//	after = "5s"          that long after the stream began, events or not
//	after_priming = true  right after the first priming event
//	before_response=true  instead of writing the first JSON-RPC response
//
// Exactly one trigger is given. With hold = true (an event trigger only),
// fray goes on reading the server's stream after the client's side ended,
// until the client resumes (see EventAction.Hold). "after" here is the kind's parameter; use
// run_after to schedule a close fault on the run's time.
var closeKind = Kind{
	Name: "close", On: OnStream, Once: true, OwnsAfter: true, Params: holdKeys,
	Summary: "ends the stream cleanly after N events, after a time, right after the priming event or just before the response",
	Traits:  EndsStream,
	Build: func(a *Args) Effect {
		t := readTrigger(a)
		hold := readHold(a, t, true)
		switch {
		case t.mode == trigNone:
			return Effect{}
		case t.atStart():
			return Effect{Start: closeStart{mode: CloseBefore}}
		case t.mode == trigAfter:
			return Effect{Start: closeTimer{after: t.after}, Traits: Armed}
		}
		return Effect{Event: closeEvent{t: t, hold: hold}, Traits: holdTraits(hold)}
	},
}

// closeStart ends the stream before its first event.
type closeStart struct{ mode CloseMode }

func (c closeStart) Start(a *StreamAction) {
	if a.Close == CloseNone {
		a.Close = c.mode
	}
}

// closeTimer ends the stream a time after it began.
type closeTimer struct{ after time.Duration }

func (c closeTimer) Start(a *StreamAction) {
	if a.CloseAfter == 0 || c.after < a.CloseAfter {
		a.CloseAfter = c.after
	}
}

// closeEvent ends the stream at an event.
type closeEvent struct {
	t    trigger
	hold bool
}

func (c closeEvent) Applies(ev *mcp.Event, st *StreamState) bool {
	switch c.t.mode {
	case trigEvents:
		st.Seen++
		return st.Seen == c.t.n
	case trigPriming:
		return ev.Priming
	default:
		return ev.RPCKind.Answers()
	}
}

func (c closeEvent) Event(_ *mcp.Event, _ *Rand, a *EventAction) {
	if a.Close != CloseNone {
		return
	}
	a.Close, a.Hold = CloseAfter, c.hold
	if c.t.mode == trigResponse {
		a.Close = CloseBefore
	}
}

// holdKeys are the parameters of close and reset: a trigger, and hold.
var holdKeys = append(append([]string(nil), triggerKeys...), "hold")

// readHold reads hold; timed (may the trigger be a time) is false for a
// kind whose timed trigger still fires at an event (reset).
func readHold(a *Args, t trigger, timed bool) bool {
	hold := a.Bool("hold", false)
	if hold && (t.atStart() || timed && t.mode == trigAfter) {
		a.Fail("hold", ErrRange, "hold needs an event to cut at: give after_events >= 1, after_priming or before_response")
		return false
	}
	return hold
}

// holdTraits are the traits a hold adds: the events fray swallows while it
// holds never reach the client.
func holdTraits(hold bool) Traits {
	if hold {
		return EndsStream | WithholdsEvents
	}
	return 0
}
