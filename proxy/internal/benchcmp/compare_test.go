package main

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

const header = "goos: linux\ngoarch: amd64\npkg: github.com/frayproxy/fray/proxy\ncpu: AMD EPYC\n"

// m is one setup's metrics in a benchmark line.
type m struct {
	setup         string
	events, cpu   float64
	p50, p99      float64 // paced only
	omitP50, omit bool
	steal         float64 // printed when hasSteal
	hasSteal      bool
}

// line is one BenchmarkStream line as the benchmark prints it.
func line(regime string, ms ...m) string {
	var b strings.Builder
	fmt.Fprintf(&b, "BenchmarkStream/%s-2   \t  200000\t     11543 ns/op", regime)
	for _, x := range ms {
		if x.omit {
			continue
		}
		fmt.Fprintf(&b, "\t %g %s:cpu-ns/event\t %g %s:events/s", x.cpu, x.setup, x.events, x.setup)
		if regime == "paced" && !x.omitP50 {
			fmt.Fprintf(&b, "\t %g %s:p50-µs\t %g %s:p99-µs", x.p50, x.setup, x.p99, x.setup)
		}
		if x.hasSteal {
			fmt.Fprintf(&b, "\t %g %s:steal-%%", x.steal, x.setup)
		}
	}
	return b.String() + "\n"
}

// good is a run that meets every limit: paced 1.0× events and 1.1× added
// p50; bulk 0.6× events, 2× CPU, a trace costing 300 ns.
func good() string {
	return line("paced",
		m{setup: "direct", events: 400000, cpu: 2000, p50: 20, p99: 60},
		m{setup: "reverseproxy", events: 300000, cpu: 3000, p50: 30, p99: 80},
		m{setup: "fray", events: 310000, cpu: 3500, p50: 30, p99: 90},
		m{setup: "fray-shipped", events: 300000, cpu: 4000, p50: 31, p99: 100},
		m{setup: "fray-traced", events: 250000, cpu: 5000, p50: 33, p99: 100},
	) + line("bulk",
		m{setup: "direct", events: 3000000, cpu: 250},
		m{setup: "reverseproxy", events: 2500000, cpu: 350},
		m{setup: "fray", events: 2000000, cpu: 500},
		m{setup: "fray-shipped", events: 1500000, cpu: 700},
		m{setup: "fray-traced", events: 1200000, cpu: 1000},
	)
}

func ratio(t *testing.T, c *Comparison, prefix string) float64 {
	t.Helper()
	for _, r := range c.Ratios {
		if strings.HasPrefix(r.Name, prefix) {
			return r.Value
		}
	}
	t.Fatalf("no ratio %q", prefix)
	return 0
}

func TestRun(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr string
	}{
		{"passes", header + good() + "PASS\n", ""},
		{"bulk too slow", header + strings.Replace(good(), "1.5e+06 fray-shipped:events/s", "1e+06 fray-shipped:events/s", 1), "bulk   fray-shipped/reverseproxy events/s is 0.400×"},
		{"bulk CPU", header + strings.Replace(good(), "700 fray-shipped:cpu-ns/event", "1100 fray-shipped:cpu-ns/event", 1), "CPU/event is 3.143×"},
		{"trace cost", header + strings.Replace(good(), "1000 fray-traced:cpu-ns/event", "1300 fray-traced:cpu-ns/event", 1), "trace on - off, CPU/event is 600.000ns"},
		{"paced too slow", header + strings.Replace(good(), "300000 fray-shipped:events/s", "290000 fray-shipped:events/s", 1), "paced  fray-shipped/reverseproxy events/s is 0.967×"},
		{"paced latency", header + strings.Replace(good(), "31 fray-shipped:p50-µs", "33 fray-shipped:p50-µs", 1), "added p50 is 1.300×"},
		{"missing setup", header + strings.Replace(good(), "fray-traced", "other", -1), "trace on - off, CPU/event: the input lacks"},
		{"failed run", header + "--- FAIL: BenchmarkStream/bulk\n    bench_test.go:99: boom\nFAIL\n", "the benchmark failed"},
		{"empty", "", "no BenchmarkStream/paced nor BenchmarkStream/bulk"},
		{"bad number", header + "BenchmarkStream/bulk-2 \t 1\t x fray:events/s\n", "events/s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, echo bytes.Buffer
			err := run(strings.NewReader(tt.in), &out, &echo, DefaultLimits)
			if echo.String() != tt.in {
				t.Errorf("echo = %q, want the input", echo.String())
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"paced (medians of 1 runs)", "bulk (medians of 1 runs)", "fray-traced", "CPU/event", "ok\n"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, out.String())
				}
			}
		})
	}
}

// TestOneRegime: an input with one regime gets that regime's table and
// ratios, and fails naming the regime whose limits went unchecked.
func TestOneRegime(t *testing.T) {
	var pacedOnly strings.Builder
	for l := range strings.Lines(good()) {
		if strings.HasPrefix(l, "BenchmarkStream/paced") {
			pacedOnly.WriteString(l)
		}
	}
	var out bytes.Buffer
	err := run(strings.NewReader(header+pacedOnly.String()+"PASS\n"), &out, nil, DefaultLimits)
	if err == nil || !strings.Contains(err.Error(), "no BenchmarkStream/bulk in the input: its limits are not checked") {
		t.Fatalf("err = %v, want one naming the bulk regime", err)
	}
	if strings.Contains(err.Error(), "paced") {
		t.Errorf("err = %v, which blames the paced regime, whose limits hold", err)
	}
	for _, want := range []string{"paced (medians of 1 runs)", "paced  fray-shipped/reverseproxy added p50"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "bulk") {
		t.Errorf("output shows a bulk regime the input lacks:\n%s", out.String())
	}
}

// TestRatios: each ratio is computed within a run, then the median over
// runs is taken; a reverse proxy adding less than minAdded µs counts as
// adding minAdded.
func TestRatios(t *testing.T) {
	slow := strings.Replace(good(), "1.5e+06 fray-shipped:events/s", "500000 fray-shipped:events/s", 1)
	fast := strings.Replace(good(), "2.5e+06 reverseproxy:events/s", "1.5e+06 reverseproxy:events/s", 1)
	res, err := Parse(strings.NewReader(header + good() + slow + fast))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Compare(res, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	r := c.Ratios[slices.IndexFunc(c.Ratios, func(r Ratio) bool { return strings.HasPrefix(r.Name, "bulk   fray-shipped/reverseproxy events/s") })]
	if math.Abs(r.Low-0.2) > 1e-9 || math.Abs(r.High-1.0) > 1e-9 || r.Runs != 3 {
		t.Errorf("bulk events/s over runs 0.6, 0.2, 1.0: low %v, high %v, runs %d; want 0.2, 1, 3", r.Low, r.High, r.Runs)
	}
	var out bytes.Buffer
	c.Write(&out)
	if want := "(want >= 0.5×, median of 3, runs 0.200 to 1.000) ok"; !strings.Contains(out.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, out.String())
	}
	for _, tt := range []struct {
		prefix string
		want   float64
	}{
		{"bulk   fray-shipped/reverseproxy events/s", 0.6}, // runs 0.6, 0.2, 1.0
		{"bulk   fray-shipped/reverseproxy CPU/event", 2},
		{"bulk   trace on - off, CPU/event", 300},
		{"paced  fray-shipped/reverseproxy added p50", 1.1},
		{"paced  fray/reverseproxy added p50", 1},
	} {
		if got := ratio(t, c, tt.prefix); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", tt.prefix, got, tt.want)
		}
	}

	floored := line("paced",
		m{setup: "direct", events: 1, p50: 30}, m{setup: "reverseproxy", events: 1, p50: 29.5},
		m{setup: "fray-shipped", events: 1, p50: 31}) + line("bulk",
		m{setup: "reverseproxy", events: 1, cpu: 1}, m{setup: "fray-shipped", events: 1, cpu: 1},
		m{setup: "fray-traced", events: 1, cpu: 1})
	res, _ = Parse(strings.NewReader(floored))
	c, err = Compare(res, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if got := ratio(t, c, "paced  fray-shipped/reverseproxy added p50"); got != 1/minAdded {
		t.Errorf("floored added p50 = %v, want %v", got, 1/minAdded)
	}
}

// TestSteal: the steal each setup reported is shown in its regime's table,
// as a median over runs; a regime whose highest median reaches stealNote
// is said to have run on a contended machine, one below it is not; and
// steal changes no verdict.
func TestSteal(t *testing.T) {
	bulk := func(steal float64) string {
		return line("bulk",
			m{setup: "reverseproxy", events: 2500000, cpu: 350, steal: 0, hasSteal: true},
			m{setup: "fray-shipped", events: 1500000, cpu: 700, steal: steal, hasSteal: true},
			m{setup: "fray-traced", events: 1200000, cpu: 1000, steal: 1, hasSteal: true})
	}
	for _, tt := range []struct {
		name      string
		runs      []float64 // fray-shipped's steal in each run
		wantSteal string    // fray-shipped's cell
		contended bool
	}{
		{"quiet", []float64{0, 1, 4.9}, "1.0", false},
		{"busy", []float64{30, 2, 20}, "20.0", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := header
			for _, s := range tt.runs {
				in += bulk(s)
			}
			var out bytes.Buffer
			err := run(strings.NewReader(in), &out, nil, DefaultLimits)
			if err == nil || !strings.Contains(err.Error(), "no BenchmarkStream/paced") || strings.Contains(err.Error(), "bulk ") {
				t.Errorf("err = %v, want only the missing paced regime", err)
			}
			row := ""
			for l := range strings.Lines(out.String()) {
				if strings.HasPrefix(l, "fray-shipped ") {
					row = l
				}
			}
			if f := strings.Fields(row); len(f) != 7 || f[6] != tt.wantSteal {
				t.Errorf("fray-shipped row %q: want steal-%% %s in its last column", row, tt.wantSteal)
			}
			if got := strings.Contains(out.String(), "bulk: the host took up to"); got != tt.contended {
				t.Errorf("contended machine said: %v, want %v:\n%s", got, tt.contended, out.String())
			}
		})
	}
}
