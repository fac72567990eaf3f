package forward

import (
	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/mcp"
)

// decider is the decision stage of a stream's pipeline: what happens to
// each event, asked of the stream's fault plan. It does no I/O; the sink
// carries its decisions out.
type decider struct {
	// plan is the stream's fault plan; nil when no fault can hit the
	// stream.
	plan faults.StreamPlan
	// lose is how many events a lose fault still swallows, this one
	// included, before the client's side closes.
	lose int
}

// decide returns the action for v, the stream's current event. After a
// lose fault fired, it swallows the events that follow (Lose counts down
// to 1, the last one lost) without asking the plan.
func (d *decider) decide(v *mcp.Event) faults.EventAction {
	if d.lose > 0 {
		a := faults.EventAction{Lose: d.lose}
		d.lose--
		return a
	}
	if d.plan == nil {
		return faults.EventAction{}
	}
	a := d.plan.Event(v)
	if a.Lose > 0 {
		d.lose = a.Lose - 1
	}
	return a
}
