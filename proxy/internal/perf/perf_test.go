package main

import (
	"bytes"
	"context"
	"math"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/examples/gosdk/refpeer"
	"github.com/frayproxy/fray/proxy/internal/benchsse"
)

// TestMain lets the tests start this test binary as the ReverseProxy
// child, as the command starts itself.
func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == reverseProxyArg {
		if err := serveReverseProxy(os.Args[2]); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestParseStatCPU(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		want       time.Duration
		bad        bool
	}{
		{name: "plain", line: "42 (fray) S 1 42 42 0 -1 4194560 100 0 0 0 250 37 0 0 20 0 8 0 100 0 0", want: 2870 * time.Millisecond},
		{name: "spaces and parentheses in the name", line: "7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0", want: 70 * time.Millisecond},
		{name: "no name", line: "7 a R 1", bad: true},
		{name: "too short", line: "7 (a) R 1 2 3", bad: true},
		{name: "not a number", line: "7 (a) R 1 7 7 0 -1 0 0 0 0 0 x 4 0 0", bad: true},
	} {
		got, err := parseStatCPU([]byte(tc.line))
		if tc.bad {
			if err == nil {
				t.Errorf("%s: %v, want an error", tc.name, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}

func TestParseVmRSS(t *testing.T) {
	got, err := parseVmRSS([]byte("Name:\tfray\nVmPeak:\t 900 kB\nVmRSS:\t   1536 kB\nThreads:\t8\n"))
	if err != nil || got != 1536<<10 {
		t.Errorf("%d, %v; want %d", got, err, 1536<<10)
	}
	for _, bad := range []string{"Name:\tfray\n", "VmRSS:\t lots kB\n"} {
		if _, err := parseVmRSS([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestCPUModel(t *testing.T) {
	info := "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\nprocessor\t: 1\nmodel name\t: AMD EPYC 7B13\n"
	if got := cpuModel([]byte(info)); got != "AMD EPYC 7B13" {
		t.Errorf("%q", got)
	}
	if got := cpuModel([]byte("processor\t: 0\n")); got != "unknown CPU" {
		t.Errorf("no model name: %q", got)
	}
}

func TestMemTotal(t *testing.T) {
	if got := memTotal([]byte("MemTotal:       24626040 kB\nMemFree: 1 kB\n")); got != "23 GiB" {
		t.Errorf("%q", got)
	}
	if got := memTotal([]byte("MemFree: 1 kB\n")); got != "unknown memory" {
		t.Errorf("no MemTotal: %q", got)
	}
}

func TestParseFlags(t *testing.T) {
	cfg, err := parseFlags([]string{"-figures", "1, 4", "-soak", "30m"}, &bytes.Buffer{})
	if err != nil || !cfg.figures[1] || !cfg.figures[4] || cfg.figures[2] || cfg.soak != 30*time.Minute {
		t.Errorf("%+v, %v", cfg, err)
	}
	for _, bad := range [][]string{{"-figures", "6"}, {"-figures", "1,x"}, {"-rounds", "0"}, {"-soak", "0s"}, {"-what"}} {
		var errw bytes.Buffer
		if _, err := parseFlags(bad, &errw); err == nil || errw.Len() == 0 {
			t.Errorf("%q: %v, said %q; want an error, said", bad, err, errw.String())
		}
	}
}

func TestFigureVerdict(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    figure
		want string
	}{
		{"at most, under", figure{Value: 0.8, Limit: 1}, "ok"},
		{"at most, on it", figure{Value: 1, Limit: 1}, "ok"},
		{"at most, over", figure{Value: 1.01, Limit: 1}, "MISS"},
		{"at least, over", figure{Value: 0.97, Limit: 0.95, AtLeast: true}, "ok"},
		{"at least, under", figure{Value: 0.9, Limit: 0.95, AtLeast: true}, "MISS"},
		{"not measured", figure{Value: math.NaN(), Limit: 8}, "MISS"},
		{"unjudged", figure{Value: 300, Limit: 1, Unjudged: "short"}, "not judged"},
	} {
		if got := tc.f.verdict(); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
		if tc.f.holds() != (tc.want != "MISS") {
			t.Errorf("%s: holds %v", tc.name, tc.f.holds())
		}
	}
	var out bytes.Buffer
	if n := writeFigures(&out, []figure{{Name: "a", Value: 2, Limit: 1}, {Name: "b", Value: 0.5, Limit: 1}}); n != 1 {
		t.Errorf("%d misses, want 1:\n%s", n, out.String())
	}
}

func TestRatios(t *testing.T) {
	if got := ratio(3, 2); got != 1.5 {
		t.Errorf("ratio(3, 2) = %v", got)
	}
	if got := ratio(3, 0); !math.IsNaN(got) {
		t.Errorf("ratio(3, 0) = %v, want NaN", got)
	}
	for _, tc := range []struct {
		name             string
		direct, fray, rp float64
		want             float64
	}{
		{"both add", 30, 90, 60, 2},
		{"reverseproxy adds nothing measurable", 30, 35, 29, 5},
	} {
		if got := addedRatio(tc.direct, tc.fray, tc.rp); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	tl := tally{lat: []time.Duration{5 * time.Microsecond, time.Microsecond, 3 * time.Microsecond, 9 * time.Microsecond}}
	if got := tl.p50(); got != 3 {
		t.Errorf("p50 %v µs, want 3", got)
	}
	tl.add(1000, time.Second, 2*time.Millisecond)
	if tl.eventsPerSec() != 1000 || tl.cpuPerEvent() != 2 {
		t.Errorf("%v events/s, %v µs per event; want 1000 and 2", tl.eventsPerSec(), tl.cpuPerEvent())
	}
}

func TestSlope(t *testing.T) {
	for _, tc := range []struct {
		name string
		x, y []float64
		want float64
	}{
		{"rising", []float64{0, 1, 2, 3}, []float64{5, 7, 9, 11}, 2},
		{"flat", []float64{0, 1, 2}, []float64{4, 4, 4}, 0},
		{"one point", []float64{1}, []float64{3}, 0},
		{"one x", []float64{2, 2}, []float64{1, 3}, 0},
	} {
		if got := slope(tc.x, tc.y); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestSoakVerdict: a short soak is reported and not judged; a full one
// fits only after the warm-up, and misses when it carried too few
// sessions.
func TestSoakVerdict(t *testing.T) {
	mib := float64(1 << 20)
	// 30 minutes: the heap grows 10 MiB while the first 70,000 sessions
	// come, then stays flat.
	var full []soakSample
	for i := range 181 {
		at := time.Duration(i) * 10 * time.Second
		s := soakSample{at: at, sessions: int64(i) * 1000, live: 20 * mib}
		if s.sessions < soakWarmSessions {
			s.live = 10*mib + 10*mib*float64(s.sessions)/soakWarmSessions
		}
		full = append(full, s)
	}
	figs := soakVerdict(full, 30*time.Minute, 1, 0)
	if len(figs) != 2 || !figs[0].holds() || figs[0].Unjudged != "" || math.Abs(figs[0].Value) > 1e-9 || !figs[1].holds() {
		t.Errorf("full soak, flat after the warm-up: %+v", figs)
	}
	// The same soak whose heap goes on growing 2 MiB an hour.
	leak := slices.Clone(full)
	for i := range leak {
		leak[i].live += 2 * mib * leak[i].at.Hours()
	}
	if figs := soakVerdict(leak, 30*time.Minute, 1, 0); figs[0].holds() || math.Abs(figs[0].Value-2) > 1e-6 {
		t.Errorf("a soak growing 2 MiB an hour: %+v", figs)
	}
	few := soakVerdict(full[:60], 30*time.Minute, 1, 0)
	if few[1].holds() {
		t.Errorf("a full soak of 59,000 sessions: %+v, want the sessions figure missed", few)
	}
	short := soakVerdict(full[:7], time.Minute, 1, 0)
	if len(short) != 1 || short[0].Unjudged == "" || !short[0].holds() {
		t.Errorf("a short soak: %+v, want one figure, not judged", short)
	}
}

// TestTinyRun: the ReverseProxy child starts and serves, its CPU and
// memory are read from /proc, and the flood, paced and bulk rounds run
// through it and through direct (the other names are in-process proxies
// here, whose CPU is not read), bounded to a few seconds.
func TestTinyRun(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc: Linux only")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	up := benchsse.NewUpstreamBeside(refpeer.NewFloodHandler())
	defer up.Close()
	rp, err := startReverseProxy(ctx, up.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer rp.stop()
	setups := []setup{{name: direct, base: up.URL}, {name: reverseProxy, base: "http://" + rp.addr, proc: rp}}
	u, _ := url.Parse(up.URL)
	for _, name := range []string{fray, toxiproxy} {
		srv := httptest.NewServer(httputil.NewSingleHostReverseProxy(u))
		defer srv.Close()
		setups = append(setups, setup{name: name, base: srv.URL})
	}
	if rss, err := procRSS(rp.pid()); err != nil || rss == 0 {
		t.Errorf("the child's VmRSS: %d, %v", rss, err)
	}
	flood, err := floodFigures(ctx, setups, 2, 200)
	if err != nil {
		t.Fatal(err)
	}
	paced, err := pacedFigure(ctx, up, setups, 2, 20, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	// Enough bulk for the child to spend several of the kernel's 10 ms
	// ticks of CPU time, which is all /proc counts in.
	bulk, err := bulkFigure(ctx, up, setups[1:], 2, 400_000)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(flood, paced, bulk) {
		if f.Name == "" || f.Detail == "" {
			t.Errorf("a figure without its name or detail: %+v", f)
		}
	}
	if !strings.Contains(flood[0].Detail, "direct ") || math.IsNaN(flood[0].Value) || flood[0].Value <= 0 {
		t.Errorf("flood events/s: %+v", flood[0])
	}
	if cpu, err := rp.cpu(); err != nil || cpu <= 0 {
		t.Errorf("the child's CPU after carrying all that: %v, %v", cpu, err)
	}
}
