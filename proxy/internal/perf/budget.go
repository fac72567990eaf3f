package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"time"
)

// A figure is one of the five measurements, reduced to the ratio its
// budget bounds.
type figure struct {
	// Name says what was measured, e.g. "Go SDK flood: events/s, fray / direct".
	Name string
	// Value is the measured ratio (or, for the soak, the slope in MiB an
	// hour).
	Value float64
	// Limit bounds Value: from below with AtLeast, from above otherwise.
	Limit   float64
	AtLeast bool
	// Unit is printed after Value and Limit: "×" for a ratio.
	Unit string
	// Detail holds the figures the ratio is made of, for the reader.
	Detail string
	// Unjudged, when not empty, says why the figure is reported but its
	// budget not applied (a short soak).
	Unjudged string
}

// holds reports whether the figure is within its budget; an unjudged
// figure holds, one that could not be measured (NaN) does not.
func (f figure) holds() bool {
	switch {
	case f.Unjudged != "":
		return true
	case math.IsNaN(f.Value):
		return false
	case f.AtLeast:
		return f.Value >= f.Limit
	default:
		return f.Value <= f.Limit
	}
}

// verdict is the word printed beside a figure.
func (f figure) verdict() string {
	switch {
	case f.Unjudged != "":
		return "not judged"
	case math.IsNaN(f.Value):
		return "MISS: too little measured to compare; give the figure more events"
	case f.holds():
		return "ok"
	default:
		return "MISS"
	}
}

func (f figure) budget() string {
	op := "≤"
	if f.AtLeast {
		op = "≥"
	}
	return fmt.Sprintf("%s %.2f%s", op, f.Limit, f.Unit)
}

// writeFigures prints one line per figure, then its detail and, for an
// unjudged one, why; it returns the number of misses.
func writeFigures(w io.Writer, figs []figure) int {
	misses := 0
	for _, f := range figs {
		fmt.Fprintf(w, "%-62s %8.2f%s  budget %-9s  %s\n", f.Name, f.Value, f.Unit, f.budget(), f.verdict())
		if f.Detail != "" {
			fmt.Fprintf(w, "    %s\n", f.Detail)
		}
		if f.Unjudged != "" {
			fmt.Fprintf(w, "    not judged: %s\n", f.Unjudged)
		}
		if !f.holds() {
			misses++
		}
	}
	return misses
}

// tally adds up what the rounds of one setup measured. The zero value
// holds none.
type tally struct {
	events int64
	took   time.Duration
	cpu    time.Duration // of the proxy's process; 0 for direct
	lat    []time.Duration
}

func (t *tally) add(events int64, took, cpu time.Duration) {
	t.events += events
	t.took += took
	t.cpu += cpu
}

// eventsPerSec is the events over the time the rounds took.
func (t *tally) eventsPerSec() float64 {
	if t.took <= 0 {
		return 0
	}
	return float64(t.events) / t.took.Seconds()
}

// cpuPerEvent is the proxy process's CPU per event, in µs.
func (t *tally) cpuPerEvent() float64 {
	if t.events == 0 {
		return 0
	}
	return t.cpu.Seconds() * 1e6 / float64(t.events)
}

// p50 is the median of the latencies recorded, in µs; lat is sorted.
func (t *tally) p50() float64 {
	if len(t.lat) == 0 {
		return 0
	}
	slices.Sort(t.lat)
	return float64(t.lat[(len(t.lat)-1)/2]) / float64(time.Microsecond)
}

// minAdded floors the added latency ReverseProxy is compared with: on a
// noisy machine the measured difference to direct can be zero or below,
// and a proxy in a process of its own always costs at least this, in µs.
const minAdded = 1.0

// addedRatio is fray's added p50 latency over ReverseProxy's, both added
// to direct's, the denominator floored at minAdded.
func addedRatio(direct, fray, rp float64) float64 {
	return (fray - direct) / max(rp-direct, minAdded)
}

// ratio is a over b; NaN when b is not positive (a CPU time below the
// kernel's tick), so that no budget is said to hold on nothing.
func ratio(a, b float64) float64 {
	if b <= 0 {
		return math.NaN()
	}
	return a / b
}

// slope is the least-squares slope of y over x; 0 with fewer than two
// distinct x.
func slope(x, y []float64) float64 {
	if len(x) < 2 {
		return 0
	}
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(len(x))
	my /= float64(len(x))
	var sxy, sxx float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
	}
	if sxx == 0 {
		return 0
	}
	return sxy / sxx
}
