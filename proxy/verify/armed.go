package verify

import (
	"slices"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
)

// acted returns the firings of o that count as faults that acted. A
// fault armed as a stream starts (faults.Armed: an idle timeout, a timed
// close) is reported with the stream's head, yet acts only if its
// condition comes: it is kept on the exchange and counted when the stream
// ends by a fault that no event-level fault explains. So a run too short
// for a 300 s idle timeout has no fault fired, and its verdict is
// inconclusive, not a pass. o's slice is returned as is when nothing in it
// is armed.
func (v *Verifier) acted(o *observe.Observation) []faults.Firing {
	x := v.exch[o.Exchange]
	switch o.Kind {
	case observe.KindResponse:
		out := unarmed(o.Fired)
		if len(out) == len(o.Fired) || x == nil {
			return out
		}
		for _, f := range o.Fired {
			if f.Traits.Has(faults.Armed) {
				x.armed = append(x.armed, f)
				v.armedBy[f.Index]++
			}
		}
		return out
	case observe.KindEvent:
		if x != nil && faultWith(o.Fired, faults.EndsStream) != nil {
			x.cutAtEvent = true
		}
	case observe.KindEnd:
		if x != nil && len(x.armed) > 0 && o.End != nil && o.End.Cause == observe.FaultClosed && !x.cutAtEvent {
			// Which armed fault ended the stream fray does not say; the
			// first armed is the one counted.
			f := x.armed[0]
			x.armed = nil
			if x.endFault == nil {
				x.endFault = &report.FaultRef{Index: f.Index, Kind: f.Kind}
			}
			return append(o.Fired[:len(o.Fired):len(o.Fired)], f)
		}
	}
	return o.Fired
}

// unarmed returns fired without the faults that were only armed
// (faults.Armed): what acted on a stream's head.
func unarmed(fired []faults.Firing) []faults.Firing {
	for i, f := range fired {
		if f.Traits.Has(faults.Armed) {
			out := slices.Clone(fired[:i])
			for _, g := range fired[i+1:] {
				if !g.Traits.Has(faults.Armed) {
					out = append(out, g)
				}
			}
			return out
		}
	}
	return fired
}
