package faults

import "github.com/frayproxy/fray/proxy/mcp"

// Exchange decides for an exchange. Faults fire in index order; durations
// add up, flags combine, and where values cannot be combined (a status, a
// new Last-Event-ID) the fault with the lowest index wins.
func (s *Set) Exchange(ex *mcp.Exchange) ExchangeAction {
	// act is allocated at the first firing: effects are called through
	// an interface, so anything they are handed lives on the heap.
	var act *ExchangeAction
	id, hashed := uint64(0), false
	for _, f := range s.exchange {
		if !f.enabled.Load() || !f.sel.matchExchange(ex, true) || !f.sel.sched.on(ex.SinceRun) {
			continue
		}
		if !f.onEx.Applies(ex) {
			continue
		}
		if !hashed {
			id, hashed = identity(ex), true
		}
		var r Rand
		r.seed(s.seed, f.index, saltExchange, id)
		if !s.draw(f, &r, traffic(ex), saltExchange, id, true) || !f.limit.take(ex.SessionSeq) {
			continue
		}
		if act == nil {
			act = new(ExchangeAction)
		}
		f.onEx.Exchange(ex, &r, act)
		f.fired.Add(1)
		act.Fired = append(act.Fired, f.firing())
	}
	if act == nil {
		return ExchangeAction{}
	}
	return *act
}
