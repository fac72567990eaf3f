package faults

import (
	"time"

	"github.com/frayproxy/fray/mcp"
)

// closeKind ends a stream cleanly, once, at the first of:
//
//	after_events = N      after the Nth event that matches the selector
//	                      (0: before the first event, at the stream's start)
//	after = "5s"          that long after the stream began, events or not
//	after_priming = true  right after the first priming event
//	before_response=true  instead of writing the first JSON-RPC response
//
// Exactly one trigger is given. "after" here is the kind's parameter; use
// run_after to schedule a close fault on the run's time.
var closeKind = Kind{
	Name: "close", On: OnStream, Once: true, OwnsAfter: true, Params: triggerKeys,
	Summary: "ends the stream cleanly after N events, after a time, right after the priming event or just before the response",
	Traits:  EndsStream,
	Build: func(a *Args) Effect {
		t := readTrigger(a)
		switch {
		case t.mode == trigNone:
			return Effect{}
		case t.atStart():
			return Effect{Start: closeStart{mode: CloseBefore}}
		case t.mode == trigAfter:
			return Effect{Start: closeTimer{after: t.after}}
		}
		return Effect{Event: closeEvent{t: t}}
	},
}

// closeStart ends the stream before its first event.
type closeStart struct{ mode CloseMode }

var _ StartEffect = closeStart{}

func (c closeStart) Start(a *StreamAction) {
	if a.Close == CloseNone {
		a.Close = c.mode
	}
}

// closeTimer ends the stream a time after it began.
type closeTimer struct{ after time.Duration }

var _ StartEffect = closeTimer{}

func (c closeTimer) Start(a *StreamAction) {
	if a.CloseAfter == 0 || c.after < a.CloseAfter {
		a.CloseAfter = c.after
	}
}

// closeEvent ends the stream at an event.
type closeEvent struct{ t trigger }

var _ EventEffect = closeEvent{}

func (c closeEvent) Applies(ev *mcp.Event, st *StreamState) bool {
	switch c.t.mode {
	case trigEvents:
		st.Seen++
		return st.Seen == c.t.n
	case trigPriming:
		return ev.Priming
	default:
		return isResponse(ev.RPCKind)
	}
}

func (c closeEvent) Event(_ *mcp.Event, _ *Rand, a *EventAction) {
	if a.Close != CloseNone {
		return
	}
	a.Close = CloseAfter
	if c.t.mode == trigResponse {
		a.Close = CloseBefore
	}
}
