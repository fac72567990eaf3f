package faults

import "time"

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
var closeKind = kindDef{
	name: "close", target: onStream, once: true, ownsAfter: true, params: triggerKeys,
	summary: "ends the stream cleanly after N events, after a time, right after the priming event or just before the response",
	build: func(a *args) any {
		t := readTrigger(a)
		switch {
		case t.mode == trigNone:
			return nil
		case t.atStart():
			return closeStart{mode: CloseBefore}
		case t.mode == trigAfter:
			return closeTimer{after: t.after}
		}
		return closeEvent{t: t}
	},
}

// closeStart ends the stream before its first event.
type closeStart struct{ mode CloseMode }

func (c closeStart) start(a *StreamAction) {
	if a.Close == CloseNone {
		a.Close = c.mode
	}
}

// closeTimer ends the stream a time after it began.
type closeTimer struct{ after time.Duration }

func (c closeTimer) start(a *StreamAction) {
	if a.CloseAfter == 0 || c.after < a.CloseAfter {
		a.CloseAfter = c.after
	}
}

// closeEvent ends the stream at an event.
type closeEvent struct{ t trigger }

func (c closeEvent) applies(ev *Event, st *streamState) bool {
	switch c.t.mode {
	case trigEvents:
		st.seen++
		return st.seen == c.t.n
	case trigPriming:
		return ev.Priming
	default:
		return isResponse(ev.RPCKind)
	}
}

func (c closeEvent) event(_ *Event, _ *rng, a *EventAction) {
	if a.Close != CloseNone {
		return
	}
	a.Close = CloseAfter
	if c.t.mode == trigResponse {
		a.Close = CloseBefore
	}
}
