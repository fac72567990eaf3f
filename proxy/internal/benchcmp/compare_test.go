package main

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"
)

const header = "goos: linux\ngoarch: amd64\npkg: github.com/frayproxy/fray/proxy\ncpu: AMD EPYC\n"

func line(mode string, events, p50, p99 float64) string {
	return "BenchmarkStream/" + mode + "-2   \t   20000\t      3018 ns/op\t    " +
		ftoa(events) + " events/s\t        " + ftoa(p50) + " p50-µs\t        " + ftoa(p99) + " p99-µs\t       6 B/op\t       0 allocs/op\n"
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func TestRun(t *testing.T) {
	lim := Limits{MinEvents: 0.9, MaxP50: 1.2}
	tests := []struct {
		name    string
		in      string
		events  float64 // want ratios, when no error
		p50     float64
		wantErr string
	}{
		{"passes",
			header + line("direct", 400000, 20, 60) + line("reverseproxy", 300000, 30, 80) + line("fray", 290000, 31, 100) + "PASS\n",
			290000.0 / 300000, 11.0 / 10, ""},
		{"too slow",
			header + line("direct", 400000, 20, 60) + line("reverseproxy", 300000, 30, 80) + line("fray", 260000, 31, 100),
			260000.0 / 300000, 11.0 / 10, "events/s"},
		{"too much latency",
			header + line("direct", 400000, 20, 60) + line("reverseproxy", 300000, 30, 80) + line("fray", 300000, 33, 100),
			1, 13.0 / 10, "p50 latency"},
		{"medians over runs",
			header +
				line("direct", 400000, 20, 60) + line("reverseproxy", 300000, 30, 80) + line("fray", 100000, 90, 100) +
				line("direct", 400000, 20, 60) + line("reverseproxy", 300000, 30, 80) + line("fray", 300000, 30, 80) +
				line("direct", 400000, 20, 60) + line("reverseproxy", 900000, 30, 80) + line("fray", 300000, 31, 80),
			1, 11.0 / 10, ""},
		{"floored denominator",
			header + line("direct", 400000, 30, 60) + line("reverseproxy", 300000, 29, 80) + line("fray", 300000, 31, 100),
			1, 1, ""},
		{"floored denominator exceeded",
			header + line("direct", 400000, 30, 60) + line("reverseproxy", 300000, 29, 80) + line("fray", 300000, 32, 100),
			0, 0, "2.000× the reverse proxy's p50"},
		{"missing setup",
			header + line("direct", 400000, 20, 60) + line("fray", 300000, 30, 80),
			0, 0, "BenchmarkStream/reverseproxy"},
		{"failed run",
			header + line("direct", 400000, 20, 60) + "--- FAIL: BenchmarkStream/fray\n    bench_test.go:99: boom\nFAIL\n",
			0, 0, "the benchmark failed"},
		{"empty", "", 0, 0, "BenchmarkStream/direct"},
		{"bad number",
			header + "BenchmarkStream/fray-2 \t 1\t x events/s\n",
			0, 0, "events/s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, echo bytes.Buffer
			err := run(strings.NewReader(tt.in), &out, &echo, lim)
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
			res, _ := Parse(strings.NewReader(tt.in))
			c, _ := Compare(res)
			if math.Abs(c.EventsRatio-tt.events) > 1e-9 || math.Abs(c.P50Ratio-tt.p50) > 1e-9 {
				t.Errorf("ratios %v, %v; want %v, %v", c.EventsRatio, c.P50Ratio, tt.events, tt.p50)
			}
			for _, want := range []string{"fray/reverseproxy events/s", "added p50", "added p99", "reverseproxy "} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, out.String())
				}
			}
		})
	}
}

// TestShippedSetup: a fray-shipped setup in the input is compared with the
// reverse proxy too, for information; without it nothing is said of it.
func TestShippedSetup(t *testing.T) {
	lim := Limits{MinEvents: 0.9, MaxP50: 1.2}
	base := header + line("direct", 400000, 20, 60) + line("reverseproxy", 300000, 30, 80) + line("fray", 290000, 31, 100)
	var out bytes.Buffer
	if err := run(strings.NewReader(base+line("fray-shipped", 150000, 40, 120)), &out, nil, lim); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "fray-shipped/reverseproxy events/s: 0.500, added p50: 2.000") {
		t.Errorf("output lacks the shipped ratios:\n%s", out.String())
	}
	out.Reset()
	if err := run(strings.NewReader(base), &out, nil, lim); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "fray-shipped") {
		t.Errorf("output names a setup the input lacks:\n%s", out.String())
	}
}
