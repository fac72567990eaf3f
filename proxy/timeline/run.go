package timeline

import (
	"cmp"
	"slices"
	"time"
)

// Run-level marks are moments of the whole run rather than of an
// exchange. The page draws each as a vertical line across all lanes, its
// Label in the strip above the time axis and its Detail on hover, styled
// by Kind. Today the only one is the end of the run; an observation that
// belongs to no exchange (one that records a profile change, say: its
// time, the profile's name and seed) becomes a mark in builder.observe,
// e.g.
//
//	b.run = append(b.run, RunMark{AtUS: o.At.Microseconds(), Kind: "profile",
//		Label: "profile " + name, Detail: "seed " + seed})

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
