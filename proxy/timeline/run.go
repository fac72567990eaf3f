package timeline

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/frayproxy/fray/proxy/observe"
)

// Run-level marks are moments of the whole run rather than of an
// exchange. The page draws each as a vertical line across all lanes, its
// Label in the strip above the time axis and its Detail on hover, styled
// by Kind: the changes of the profile in force ("profile") and the end of
// the run ("end").

// profileMark is the mark of a change of the profile in force.
func profileMark(at time.Duration, p *observe.ProfileChange) RunMark {
	m := RunMark{AtUS: at.Microseconds(), Kind: "profile"}
	switch p.Action {
	case observe.ProfileSwap:
		m.Label = "profile " + p.Name
		m.Detail = fmt.Sprintf("profile %s (seed %d) put in force at %s; streams already open keep their faults", p.Name, p.Seed, shortDur(at))
	default:
		onOff := map[string]string{observe.ProfileEnable: "on", observe.ProfileDisable: "off"}[p.Action]
		m.Label = fmt.Sprintf("fault %d %s", p.Fault, onOff)
		m.Detail = fmt.Sprintf("fault %d of profile %s switched %s at %s", p.Fault, p.Name, onOff, shortDur(at))
	}
	return m
}

// runMarks sets Model.Run: the marks the observations made and the end of
// the run, in time order.
func (b *builder) runMarks(end time.Duration) {
	run := append([]RunMark{}, b.run...)
	if end > 0 {
		run = append(run, RunMark{AtUS: end.Microseconds(), Kind: "end", Label: "end of run",
			Detail: "the run stopped observing at " + shortDur(end)})
	}
	slices.SortStableFunc(run, func(a, c RunMark) int { return cmp.Compare(a.AtUS, c.AtUS) })
	b.m.Run = run
}
