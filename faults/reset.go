package faults

// resetKind aborts the client's connection with a TCP RST, once, by the
// same triggers as close. A reset cannot follow a written event, so it
// takes the place of the next one:
//
//	after_events = N      instead of the (N+1)th matching event
//	                      (0: at the stream's start)
//	after = "5s"          at the first event that long after the start
//	after_priming = true  at the first event after the priming event
//	before_response=true  instead of the first JSON-RPC response
var resetKind = kindDef{
	name: "reset", target: onStream, once: true, ownsAfter: true, params: triggerKeys,
	summary: "aborts the connection with a TCP RST at an event, by the same triggers as close",
	build: func(a *args) any {
		t := readTrigger(a)
		switch {
		case t.mode == trigNone:
			return nil
		case t.atStart():
			return closeStart{mode: CloseReset}
		}
		return resetEvent{t: t}
	},
}

type resetEvent struct{ t trigger }

func (r resetEvent) applies(ev *Event, st *streamState) bool {
	switch r.t.mode {
	case trigEvents:
		st.seen++
		return st.seen == r.t.n+1
	case trigAfter:
		return ev.SinceStream >= r.t.after
	case trigPriming:
		if st.primed {
			return true
		}
		st.primed = ev.Priming
		return false
	default:
		return isResponse(ev.RPCKind)
	}
}

func (resetEvent) event(_ *Event, _ *rng, a *EventAction) {
	if a.Close == CloseNone {
		a.Close = CloseReset
	}
}
