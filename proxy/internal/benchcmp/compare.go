package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// The regimes BenchmarkStream runs, as sub-benchmark names.
const (
	regimePaced = "paced"
	regimeBulk  = "bulk"
)

// The setups BenchmarkStream runs, as the prefixes of its metric units.
const (
	modeDirect  = "direct"
	modeRP      = "reverseproxy"
	modeFray    = "fray"
	modeShipped = "fray-shipped" // fray as `fray proxy` runs it: verifier and metrics attached
	modeTraced  = "fray-traced"  // fray-shipped with --trace
)

// setupOrder is the order in which setups are printed.
var setupOrder = []string{modeDirect, modeRP, modeFray, modeShipped, modeTraced}

// The metrics compared, as BenchmarkStream reports them after "setup:".
const (
	unitEvents = "events/s"
	unitCPU    = "cpu-ns/event"
	unitP50    = "p50-µs"
	unitP99    = "p99-µs"
	unitSteal  = "steal-%"
)

// stealNote is the steal, in percent of the machine's CPU time, from which
// Write says that the figures are of a contended machine.
const stealNote = 5.0

// minAdded floors the reverse proxy's added latency when it is the
// denominator of a ratio: on a noisy machine the measured difference can be
// zero or negative, and a proxy always costs at least this much.
const minAdded = 1.0 // µs

// Run is one line of benchmark output: every setup's metrics, measured in
// the same run with the setups taking turns.
type Run map[string]map[string]float64 // setup -> unit -> value

// Results holds the runs read, by regime.
type Results map[string][]Run

// Parse reads `go test -bench` output and collects the metrics of the
// BenchmarkStream sub-benchmarks. It fails on a FAIL line, so that a
// failed run piped in is not mistaken for a comparison.
func Parse(r io.Reader) (Results, error) {
	res := Results{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "FAIL") || strings.HasPrefix(strings.TrimSpace(line), "--- FAIL") || strings.HasPrefix(line, "panic:") {
			return nil, fmt.Errorf("the benchmark failed: %s", line)
		}
		name, rest, ok := strings.Cut(line, "\t")
		regime, ok2 := strings.CutPrefix(strings.TrimSpace(name), "BenchmarkStream/")
		if !ok || !ok2 {
			continue
		}
		if i := strings.LastIndexByte(regime, '-'); i >= 0 {
			if _, err := strconv.Atoi(regime[i+1:]); err == nil {
				regime = regime[:i] // the GOMAXPROCS suffix
			}
		}
		f := strings.Fields(rest)
		if len(f)%2 == 0 {
			return nil, fmt.Errorf("line %q: want an iteration count and value-unit pairs", line)
		}
		run := Run{}
		for i := 1; i+1 < len(f); i += 2 {
			setup, unit, ok := strings.Cut(f[i+1], ":")
			if !ok {
				continue // ns/op, B/op, allocs/op: of the whole run
			}
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("line %q: %s: %w", line, f[i+1], err)
			}
			if run[setup] == nil {
				run[setup] = map[string]float64{}
			}
			run[setup][unit] = v
		}
		res[regime] = append(res[regime], run)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return res, nil
}

// Ratio is one compared quantity: its median over runs, its lowest and
// highest run (so that a reader sees how far one run may stray from the
// median on this machine), the bound the median is held to (Max: at most;
// otherwise at least), and whether it is only printed.
type Ratio struct {
	Name      string
	Value     float64
	Low, High float64
	Bound     float64
	Max       bool
	Info      bool
	Unit      string // "×" for a ratio
	Runs      int
}

func (r *Ratio) ok() bool {
	if r.Info {
		return true
	}
	if r.Max {
		return r.Value <= r.Bound
	}
	return r.Value >= r.Bound
}

// Table is one regime's medians: setup -> unit -> median over runs.
// Steal is the highest of the setups' median steal-% (the share of the
// machine's CPU time its hypervisor gave to other work while the setup
// ran), and HasSteal whether the input reported one.
type Table struct {
	Regime   string
	Runs     int
	Median   map[string]map[string]float64
	Steal    float64
	HasSteal bool
}

// Comparison is the tables of the regimes in the input and the ratios
// held to the limits. Missing names the regimes the input lacked: their
// ratios are not computed, and Check fails on them, since their bounds
// went unchecked.
type Comparison struct {
	Tables  []Table
	Ratios  []Ratio
	Missing []string
}

// Limits are the acceptance bounds.
type Limits struct {
	MinPacedEvents float64 // lowest fray-shipped/reverseproxy events/s, paced
	MaxPacedP50    float64 // highest fray-shipped/reverseproxy added p50, paced
	MinBulkEvents  float64 // lowest fray-shipped/reverseproxy events/s, bulk
	MaxBulkCPU     float64 // highest fray-shipped/reverseproxy CPU per event, bulk
	MaxTraceNS     float64 // highest CPU per event the trace adds, bulk (ns)
}

// DefaultLimits are the bounds benchcmp checks unless told otherwise.
var DefaultLimits = Limits{MinPacedEvents: 1.0, MaxPacedP50: 1.2, MinBulkEvents: 0.5, MaxBulkCPU: 3, MaxTraceNS: 500}

// Compare takes each regime's medians, and the median over runs of each
// ratio computed within a run (the setups of one run shared the machine).
// A regime absent from the input is named in Missing; an input with
// neither is an error.
func Compare(res Results, lim Limits) (*Comparison, error) {
	var c Comparison
	var errs []error
	for _, regime := range []string{regimePaced, regimeBulk} {
		runs := res[regime]
		if len(runs) == 0 {
			c.Missing = append(c.Missing, regime)
			continue
		}
		t := Table{Regime: regime, Runs: len(runs), Median: map[string]map[string]float64{}}
		for _, setup := range setupOrder {
			for _, unit := range []string{unitEvents, unitCPU, unitP50, unitP99, unitSteal} {
				if m, ok := median(collect(runs, func(r Run) (float64, bool) { return get(r, setup, unit) })); ok {
					if t.Median[setup] == nil {
						t.Median[setup] = map[string]float64{}
					}
					t.Median[setup][unit] = m
				}
			}
			if v, ok := t.Median[setup][unitSteal]; ok {
				t.Steal, t.HasSteal = max(t.Steal, v), true
			}
		}
		c.Tables = append(c.Tables, t)
	}
	if len(c.Tables) == 0 {
		return nil, fmt.Errorf("no BenchmarkStream/%s nor BenchmarkStream/%s in the input", regimePaced, regimeBulk)
	}
	paced, bulk := res[regimePaced], res[regimeBulk]
	ratio := func(num, den, unit string) func(Run) (float64, bool) {
		return func(r Run) (float64, bool) {
			a, ok1 := get(r, num, unit)
			b, ok2 := get(r, den, unit)
			return a / b, ok1 && ok2 && b > 0
		}
	}
	added := func(setup string) func(Run) (float64, bool) {
		return func(r Run) (float64, bool) {
			d, ok0 := get(r, modeDirect, unitP50)
			a, ok1 := get(r, setup, unitP50)
			b, ok2 := get(r, modeRP, unitP50)
			return (a - d) / max(b-d, minAdded), ok0 && ok1 && ok2
		}
	}
	traceNS := func(r Run) (float64, bool) {
		a, ok1 := get(r, modeTraced, unitCPU)
		b, ok2 := get(r, modeShipped, unitCPU)
		return a - b, ok1 && ok2
	}
	traceWall := func(r Run) (float64, bool) {
		a, ok1 := get(r, modeTraced, unitEvents)
		b, ok2 := get(r, modeShipped, unitEvents)
		return 1e9/a - 1e9/b, ok1 && ok2 && a > 0 && b > 0
	}
	for _, q := range []struct {
		r    Ratio
		runs []Run
		f    func(Run) (float64, bool)
	}{
		{Ratio{Name: "paced  fray-shipped/reverseproxy events/s", Bound: lim.MinPacedEvents, Unit: "×"}, paced, ratio(modeShipped, modeRP, unitEvents)},
		{Ratio{Name: "paced  fray-shipped/reverseproxy added p50", Bound: lim.MaxPacedP50, Max: true, Unit: "×"}, paced, added(modeShipped)},
		{Ratio{Name: "bulk   fray-shipped/reverseproxy events/s", Bound: lim.MinBulkEvents, Unit: "×"}, bulk, ratio(modeShipped, modeRP, unitEvents)},
		{Ratio{Name: "bulk   fray-shipped/reverseproxy CPU/event", Bound: lim.MaxBulkCPU, Max: true, Unit: "×"}, bulk, ratio(modeShipped, modeRP, unitCPU)},
		{Ratio{Name: "bulk   trace on - off, CPU/event", Bound: lim.MaxTraceNS, Max: true, Unit: "ns"}, bulk, traceNS},
		{Ratio{Name: "paced  fray/reverseproxy events/s", Info: true, Unit: "×"}, paced, ratio(modeFray, modeRP, unitEvents)},
		{Ratio{Name: "paced  fray/reverseproxy added p50", Info: true, Unit: "×"}, paced, added(modeFray)},
		{Ratio{Name: "bulk   fray/reverseproxy events/s", Info: true, Unit: "×"}, bulk, ratio(modeFray, modeRP, unitEvents)},
		{Ratio{Name: "bulk   fray/reverseproxy CPU/event", Info: true, Unit: "×"}, bulk, ratio(modeFray, modeRP, unitCPU)},
		{Ratio{Name: "bulk   trace on - off, wall time/event", Info: true, Unit: "ns"}, bulk, traceWall},
	} {
		if len(q.runs) == 0 {
			continue // a regime the input lacks: in c.Missing
		}
		vals := collect(q.runs, q.f)
		m, ok := median(vals)
		if !ok {
			if !q.r.Info {
				errs = append(errs, fmt.Errorf("%s: the input lacks a setup or metric it needs", q.r.Name))
			}
			continue
		}
		q.r.Value, q.r.Runs = m, len(vals)
		q.r.Low, q.r.High = slices.Min(vals), slices.Max(vals)
		c.Ratios = append(c.Ratios, q.r)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &c, nil
}

func get(r Run, setup, unit string) (float64, bool) {
	v, ok := r[setup][unit]
	return v, ok
}

func collect(runs []Run, f func(Run) (float64, bool)) []float64 {
	var out []float64
	for _, r := range runs {
		if v, ok := f(r); ok {
			out = append(out, v)
		}
	}
	return out
}

func median(v []float64) (float64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2], true
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2, true
}

// Write prints each regime's table of medians and the ratios.
func (c *Comparison) Write(w io.Writer) {
	for _, t := range c.Tables {
		fmt.Fprintf(w, "\n%s (medians of %d runs)\n%-13s %12s %13s %9s %9s %10s %8s\n", t.Regime, t.Runs, "setup", "events/s", "cpu-ns/event", "p50-µs", "p99-µs", "added-p50", "steal-%")
		for _, s := range setupOrder {
			m := t.Median[s]
			if m == nil {
				continue
			}
			cell := func(unit, format string) string {
				if v, ok := m[unit]; ok {
					return fmt.Sprintf(format, v)
				}
				return "-"
			}
			add := "-"
			if p, ok := m[unitP50]; ok && s != modeDirect {
				add = fmt.Sprintf("%.1f", p-t.Median[modeDirect][unitP50])
			}
			fmt.Fprintf(w, "%-13s %12s %13s %9s %9s %10s %8s\n", s, cell(unitEvents, "%.0f"), cell(unitCPU, "%.0f"), cell(unitP50, "%.1f"), cell(unitP99, "%.1f"), add, cell(unitSteal, "%.1f"))
		}
	}
	for _, t := range c.Tables {
		if t.HasSteal && t.Steal >= stealNote {
			fmt.Fprintf(w, "\n%s: the host took up to %.0f%% of this machine's CPU time while a setup ran (steal-%%): these figures are of a contended machine, whose ratios spread wider than a quiet one's\n", t.Regime, t.Steal)
		}
	}
	fmt.Fprintln(w)
	for _, r := range c.Ratios {
		want := "for information"
		switch {
		case r.Info:
		case r.Max:
			want = fmt.Sprintf("want <= %g%s", r.Bound, r.Unit)
		default:
			want = fmt.Sprintf("want >= %g%s", r.Bound, r.Unit)
		}
		status := ""
		if !r.Info {
			status = " " + verdict(r.ok())
		}
		spread := ""
		if r.Runs > 1 {
			spread = fmt.Sprintf(", runs %.3f to %.3f", r.Low, r.High)
		}
		fmt.Fprintf(w, "%-44s %8.3f%s (%s, median of %d%s)%s\n", r.Name+":", r.Value, r.Unit, want, r.Runs, spread, status)
	}
}

func verdict(ok bool) string {
	if ok {
		return "ok"
	}
	return "FAIL"
}

// Check returns an error naming every limit missed, and every regime
// whose limits the input could not check.
func (c *Comparison) Check() error {
	var errs []error
	for _, regime := range c.Missing {
		errs = append(errs, fmt.Errorf("no BenchmarkStream/%s in the input: its limits are not checked", regime))
	}
	for _, r := range c.Ratios {
		if !r.ok() {
			rel := "at least"
			if r.Max {
				rel = "at most"
			}
			errs = append(errs, fmt.Errorf("%s is %.3f%s, want %s %g%s", r.Name, r.Value, r.Unit, rel, r.Bound, r.Unit))
		}
	}
	return errors.Join(errs...)
}
