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

// The setups BenchmarkStream runs, as sub-benchmark names.
const (
	modeDirect = "direct"
	modeRP     = "reverseproxy"
	modeFray   = "fray"
	// modeShipped is fray as `fray proxy` runs it, verifier and metrics
	// attached; optional in the input.
	modeShipped = "fray-shipped"
)

// The metrics compared, as BenchmarkStream reports them.
const (
	unitEvents = "events/s"
	unitP50    = "p50-µs"
	unitP99    = "p99-µs"
)

// minAdded floors the reverse proxy's added latency when it is the
// denominator of a ratio: on a noisy machine the measured difference can be
// zero or negative, and a proxy always costs at least this much.
const minAdded = 1.0 // µs

// Results holds every value read, by setup and unit, one per run.
type Results map[string]map[string][]float64

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
		mode, ok2 := strings.CutPrefix(strings.TrimSpace(name), "BenchmarkStream/")
		if !ok || !ok2 {
			continue
		}
		if i := strings.LastIndexByte(mode, '-'); i >= 0 {
			if _, err := strconv.Atoi(mode[i+1:]); err == nil {
				mode = mode[:i] // the GOMAXPROCS suffix
			}
		}
		f := strings.Fields(rest)
		if len(f)%2 == 0 {
			return nil, fmt.Errorf("line %q: want an iteration count and value-unit pairs", line)
		}
		for i := 1; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("line %q: %s: %w", line, f[i+1], err)
			}
			if res[mode] == nil {
				res[mode] = map[string][]float64{}
			}
			res[mode][f[i+1]] = append(res[mode][f[i+1]], v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return res, nil
}

// Setup is the median of each metric of one setup.
type Setup struct {
	Name           string
	Runs           int
	Events         float64
	P50, P99       float64
	AddP50, AddP99 float64 // over direct; 0 for direct itself
}

// Comparison is the setups and fray's ratios to the reverse proxy.
type Comparison struct {
	Setups      []Setup // direct, reverseproxy, fray, and fray-shipped when present
	EventsRatio float64 // fray/reverseproxy events/s
	P50Ratio    float64 // fray/reverseproxy added p50
	P99Ratio    float64 // fray/reverseproxy added p99
	// Shipped holds fray-shipped's ratios to the reverse proxy (events/s,
	// added p50), when the input has that setup; for information.
	Shipped *[2]float64
}

// Compare takes the medians of res and computes the ratios.
func Compare(res Results) (*Comparison, error) {
	var c Comparison
	var errs []error
	for _, name := range []string{modeDirect, modeRP, modeFray} {
		m := res[name]
		s := Setup{Name: name, Runs: len(m[unitEvents])}
		var ok [3]bool
		s.Events, ok[0] = median(m[unitEvents])
		s.P50, ok[1] = median(m[unitP50])
		s.P99, ok[2] = median(m[unitP99])
		if ok != [3]bool{true, true, true} {
			errs = append(errs, fmt.Errorf("no %s, %s and %s for BenchmarkStream/%s in the input", unitEvents, unitP50, unitP99, name))
		}
		c.Setups = append(c.Setups, s)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	d, rp, fr := &c.Setups[0], &c.Setups[1], &c.Setups[2]
	for _, s := range []*Setup{rp, fr} {
		s.AddP50, s.AddP99 = s.P50-d.P50, s.P99-d.P99
	}
	if rp.Events <= 0 {
		return nil, fmt.Errorf("reverseproxy: %v events/s", rp.Events)
	}
	c.EventsRatio = fr.Events / rp.Events
	c.P50Ratio = fr.AddP50 / max(rp.AddP50, minAdded)
	c.P99Ratio = fr.AddP99 / max(rp.AddP99, minAdded)
	if m := res[modeShipped]; m != nil {
		s := Setup{Name: modeShipped, Runs: len(m[unitEvents])}
		s.Events, _ = median(m[unitEvents])
		s.P50, _ = median(m[unitP50])
		s.P99, _ = median(m[unitP99])
		s.AddP50, s.AddP99 = s.P50-d.P50, s.P99-d.P99
		c.Setups = append(c.Setups, s)
		c.Shipped = &[2]float64{s.Events / rp.Events, s.AddP50 / max(rp.AddP50, minAdded)}
	}
	return &c, nil
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

// Limits are the acceptance bounds on fray's ratios to the reverse proxy.
type Limits struct {
	MinEvents float64 // lowest fray/reverseproxy events/s
	MaxP50    float64 // highest fray/reverseproxy added p50
}

// Write prints the table and the ratios.
func (c *Comparison) Write(w io.Writer, lim Limits) {
	fmt.Fprintf(w, "\n%-13s %5s %12s %9s %9s %12s %12s\n", "setup", "runs", "events/s", "p50-µs", "p99-µs", "added-p50", "added-p99")
	for _, s := range c.Setups {
		add50, add99 := fmt.Sprintf("%.1f", s.AddP50), fmt.Sprintf("%.1f", s.AddP99)
		if s.Name == modeDirect {
			add50, add99 = "-", "-"
		}
		fmt.Fprintf(w, "%-13s %5d %12.0f %9.1f %9.1f %12s %12s\n", s.Name, s.Runs, s.Events, s.P50, s.P99, add50, add99)
	}
	fmt.Fprintf(w, "\nfray/reverseproxy events/s:  %.3f (want >= %.2f) %s\n", c.EventsRatio, lim.MinEvents, verdict(c.EventsRatio >= lim.MinEvents))
	fmt.Fprintf(w, "fray/reverseproxy added p50: %.3f (want <= %.2f) %s\n", c.P50Ratio, lim.MaxP50, verdict(c.P50Ratio <= lim.MaxP50))
	fmt.Fprintf(w, "fray/reverseproxy added p99: %.3f (for information)\n", c.P99Ratio)
	if c.Shipped != nil {
		fmt.Fprintf(w, "fray-shipped/reverseproxy events/s: %.3f, added p50: %.3f (verifier and metrics attached; for information)\n", c.Shipped[0], c.Shipped[1])
	}
}

func verdict(ok bool) string {
	if ok {
		return "ok"
	}
	return "FAIL"
}

// Check returns an error naming every limit fray misses.
func (c *Comparison) Check(lim Limits) error {
	var errs []error
	if c.EventsRatio < lim.MinEvents {
		errs = append(errs, fmt.Errorf("fray streams %.3f× the reverse proxy's events/s, want at least %.2f×", c.EventsRatio, lim.MinEvents))
	}
	if c.P50Ratio > lim.MaxP50 {
		errs = append(errs, fmt.Errorf("fray adds %.3f× the reverse proxy's p50 latency, want at most %.2f×", c.P50Ratio, lim.MaxP50))
	}
	return errors.Join(errs...)
}
