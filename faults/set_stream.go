package faults

import (
	"time"

	"github.com/frayproxy/fray/proxy/mcp"
)

// Stream returns the decisions for a stream opened in answer to ex. Only
// the faults whose stream, method, path (and, for stream kinds, rpc_kind
// and rpc_method) selectors match ex are kept, so the faults that can never
// hit the stream cost nothing per event. A stream already running keeps its
// faults when the Set changes, but sees faults switched off.
func (s *Set) Stream(ex *mcp.Exchange) StreamPlan {
	var p *streamPlan
	for _, f := range s.stream {
		if !f.sel.matchExchange(ex, f.def.On != OnEvent) {
			continue
		}
		if k, ok := f.onEvent.(StreamKeeper); ok && !k.Keeps(ex) {
			continue
		}
		if p == nil {
			p = &streamPlan{set: s, ex: traffic(ex), sinceRun: ex.SinceRun, session: ex.SessionSeq, id: identity(ex)}
		}
		sl := slot{f: f}
		sl.r.seed(s.seed, f.index, saltStream, p.id)
		if f.def.On == OnStream {
			sl.off = !s.draw(f, &sl.r, p.ex, saltStream, p.id, true)
		}
		p.slots = append(p.slots, sl)
	}
	if p == nil {
		return emptyStream{}
	}
	return p
}

// emptyStream is the plan of a stream no fault can hit.
type emptyStream struct{}

// Inert reports whether sp is the plan of a stream no fault can hit: it
// decides nothing, and reads nothing of the events it is given.
func Inert(sp StreamPlan) bool {
	_, ok := sp.(emptyStream)
	return ok
}

func (emptyStream) Start() StreamAction          { return StreamAction{} }
func (emptyStream) Event(*mcp.Event) EventAction { return EventAction{} }

// streamPlan holds one stream's faults and their state; it is used by one
// pump at a time.
type streamPlan struct {
	set      *Set
	ex       Traffic // what the stream answers, for the skipped draws
	sinceRun time.Duration
	session  int
	id       uint64
	slots    []slot
	ended    bool
	// act is where effects write; it lives in the plan so that passing it
	// to them does not move a fresh action to the heap on every event.
	act EventAction
	// fired backs act.Fired from one event to the next, so that a firing
	// fault does not allocate; ids is the chunk rewritten ids are carved
	// from, so that rewrite-id allocates once per chunk, not per event.
	fired []Firing
	ids   []byte
}

// slot is one fault's state on one stream.
type slot struct {
	f       *fault
	r       Rand
	st      StreamState
	off     bool // probability or times ruled the fault out on this stream
	done    bool // a once kind fired
	counted bool // times already counted this stream
	drawn   bool // its source has drawn (an event kind's probability)
}

// Start decides at the stream's start: throttle, and close at a time or
// before the first event.
func (p *streamPlan) Start() StreamAction {
	var act StreamAction
	for i := range p.slots {
		sl := &p.slots[i]
		f := sl.f
		if f.onStart == nil || sl.off || !f.enabled.Load() || !f.sel.sched.on(p.sinceRun) {
			continue
		}
		if !p.take(sl) {
			continue
		}
		f.onStart.Start(&act)
		f.fired.Add(1)
		act.Fired = append(act.Fired, f.firing())
	}
	return act
}

// Event decides for one event. After an action that ends the stream
// (Close or Lose), every later call returns the zero action.
func (p *streamPlan) Event(ev *mcp.Event) EventAction {
	if p.ended {
		return EventAction{}
	}
	p.act = EventAction{Fired: p.fired[:0], ids: &p.ids}
	act := &p.act
	for i := range p.slots {
		if p.slots[i].f.onEvent != nil {
			p.eventSlot(&p.slots[i], ev, act)
		}
	}
	p.ended = act.Close != CloseNone || act.Lose > 0
	p.fired = act.Fired
	if len(act.Fired) == 0 {
		act.Fired = nil
	}
	act.ids = nil
	return *act
}

// eventSlot asks one fault about ev and lets it act.
func (p *streamPlan) eventSlot(sl *slot, ev *mcp.Event, act *EventAction) {
	f := sl.f
	if sl.off || sl.done || !f.enabled.Load() {
		return
	}
	if !f.sel.matchEvent(ev, f.def.On == OnEvent) || !f.onEvent.Applies(ev, &sl.st) {
		return
	}
	if f.def.On == OnEvent && !p.set.draw(f, &sl.r, p.ex, saltStream, p.id, !sl.drawn) {
		sl.drawn = true
		return
	}
	sl.drawn = true
	if !p.take(sl) {
		return
	}
	f.onEvent.Event(ev, &sl.r, act)
	f.fired.Add(1)
	act.Fired = append(act.Fired, f.firing())
	sl.done = f.def.Once
}

// take counts a firing against the fault's times: every firing for event
// kinds, the first on this stream for stream kinds.
func (p *streamPlan) take(sl *slot) bool {
	if sl.f.def.On == OnEvent {
		return sl.f.limit.take(p.session)
	}
	if sl.counted {
		return true
	}
	if !sl.f.limit.take(p.session) {
		sl.off = true
		return false
	}
	sl.counted = true
	return true
}
