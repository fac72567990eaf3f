package scale_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/frayproxy/fray/proxy/internal/scale"
)

// Soak settings: how many clients, how much faster than real time fray's
// clock runs (so that the soak profile's schedule of hours passes in the
// run's minutes), how often fray's memory is sampled, how long the run
// warms up before the fit, and the bounds on the fitted slopes.
const (
	soakClients = 100
	// soakCalls is the calls per session, after which it is deleted and a
	// new one starts: ~500 new sessions a minute, their ends spread out
	// (each client's first session is shorter by a different amount), so
	// that what the verifier keeps per live session does not rise and fall
	// in step. The verifier also remembers the ids of the last 65,536
	// sessions (~120 bytes each) to judge their later use: at this rate
	// that grows the heap ~60 KiB a minute, for two hours, to its bound.
	soakCalls       = 50
	soakSpeed       = 10
	soakSampleEvery = 2 * time.Second
	// soakWarmUp covers the filling of what fray keeps for a while by its
	// own clock (the verifier's ledger of recent sessions and event ids):
	// at soakSpeed, 90 s is 15 minutes of fray's time. The heap is flat
	// from about 60 s on.
	soakWarmUp = 90 * time.Second
	// soakMaxHeapSlope bounds the growth of fray's heap in use, after a
	// collection, per minute of run. The samples scatter by ~0.5 MiB (what
	// the streams open at each instant hold), which over a 6-minute run
	// puts ~30 KiB/min of noise on the slope, besides the ~60 KiB/min of
	// session ids above; a leak of 20 bytes per exchange at this load
	// (~30,000 exchanges a minute) grows it by ~600 KiB/min.
	soakMaxHeapSlope = 512 << 10
	// soakMaxGoroutineSlope bounds the growth of fray's goroutines per
	// minute: the samples scatter by ~15, ~1/min of noise on the slope;
	// one goroutine leaked per 1,000 exchanges grows them by ~30/min.
	soakMaxGoroutineSlope = 25
)

// TestSoak drives soakClients MCP clients through fray, as a child process
// under the built-in soak profile with its clock soakSpeed times faster
// than real time, with the metrics and the verifier attached as under
// `fray proxy --profile soak --report-every 1m --admin`, for FRAY_SOAK (a
// duration: minutes). Every soakSampleEvery it samples fray's heap in use
// and goroutines (after a collection), fits a line to the samples after
// the warm-up, and fails when either slope exceeds its bound. Each client
// keeps a session with a standalone GET stream open and makes calls one
// after the other, so the number of streams open stays steady whatever
// faults slow them. Without FRAY_SOAK it is skipped: .ci/run does not set
// it.
//
//	FRAY_SOAK=5m go test -run TestSoak -v -timeout 30m ./proxy/internal/scale/
func TestSoak(t *testing.T) {
	spec := os.Getenv("FRAY_SOAK")
	if spec == "" {
		t.Skip("set FRAY_SOAK=5m to run the soak test (it takes that long)")
	}
	run, err := time.ParseDuration(spec)
	if err != nil || run < 2*soakWarmUp {
		t.Fatalf("FRAY_SOAK=%q: want a duration of at least %v", spec, 2*soakWarmUp)
	}
	if _, err := scale.RaiseFileLimit(4 * soakClients); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), run+2*time.Minute)
	defer cancel()

	up := httptest.NewServer(scale.NewSoakUpstream())
	defer up.Close()
	fray, err := scale.StartChild(ctx, scale.ChildConfig{Mode: scale.ModeFray, Listen: "127.0.0.21:0",
		Upstream: up.URL, Profile: "soak", Speed: soakSpeed, ReportEvery: true})
	if err != nil {
		t.Fatal(err)
	}
	defer fray.Close()

	transport := scale.NewTransport()
	transport.MaxIdleConnsPerHost = 4 * soakClients
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport}
	var counts scale.SoakCounts
	load, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i := range soakClients {
		c := &scale.SoakClient{URL: "http://" + fray.Addr + "/mcp", HTTP: client, Calls: soakCalls,
			FirstCalls: 1 + i*soakCalls/soakClients, Counts: &counts}
		wg.Go(func() { c.Run(load) })
	}

	var samples []soakSample
	start := time.Now()
	tick := time.NewTicker(soakSampleEvery)
	for time.Since(start) < run {
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		}
		st, err := fray.Stats(ctx, true)
		if err != nil {
			t.Fatal(err)
		}
		samples = append(samples, soakSample{at: time.Since(start), stats: st})
	}
	tick.Stop()
	if dir := os.Getenv("FRAY_SCALE_PPROF"); dir != "" {
		if err := saveProfile(ctx, fray, "heap", filepath.Join(dir, "soak.heap")); err != nil {
			t.Error(err)
		}
	}
	stopLoad()
	wg.Wait()

	faults, exchanges, err := soakMetrics(ctx, fray)
	if err != nil {
		t.Fatal(err)
	}
	heap, gor, rss := soakFit(samples)
	t.Logf("%d clients for %v (fray's clock: %v of the soak profile): %d sessions, %d calls, %d answered, %d resumptions, %d standalone streams, %d failures",
		soakClients, run, run*soakSpeed, counts.Sessions.Load(), counts.Calls.Load(), counts.Answered.Load(),
		counts.Resumptions.Load(), counts.Standalone.Load(), counts.Failed.Load())
	t.Logf("fray carried %.0f exchanges (%.0f a minute); faults fired: %s", exchanges, exchanges/run.Minutes(), faults)
	for _, s := range samples {
		t.Logf("  %6.0fs  heap %7.1f MiB  rss %7.1f MiB  goroutines %5d", s.at.Seconds(),
			float64(s.stats.HeapInUse)/(1<<20), float64(s.stats.RSS)/(1<<20), s.stats.Goroutines)
	}
	t.Logf("slopes after the %v warm-up: heap %+.1f KiB/min (bound %d: %.0f bytes per exchange), goroutines %+.2f/min (bound %d), rss %+.1f KiB/min",
		soakWarmUp, heap/1024, soakMaxHeapSlope>>10, soakMaxHeapSlope/(exchanges/run.Minutes()), gor, soakMaxGoroutineSlope, rss/1024)
	if counts.Answered.Load() == 0 {
		t.Error("no call was answered: the load never went through")
	}
	if heap > soakMaxHeapSlope {
		t.Errorf("fray's heap grows %.1f KiB a minute, past the bound of %d", heap/1024, soakMaxHeapSlope>>10)
	}
	if gor > soakMaxGoroutineSlope {
		t.Errorf("fray's goroutines grow %.2f a minute, past the bound of %d", gor, soakMaxGoroutineSlope)
	}
}

type soakSample struct {
	at    time.Duration
	stats scale.Stats
}

// soakFit fits the samples after the warm-up: the slopes of heap in use
// (bytes), goroutines and RSS (bytes), each per minute.
func soakFit(samples []soakSample) (heap, goroutines, rss float64) {
	var t, h, g, r []float64
	for _, s := range samples {
		if s.at < soakWarmUp {
			continue
		}
		t = append(t, s.at.Minutes())
		h = append(h, float64(s.stats.HeapInUse))
		g = append(g, float64(s.stats.Goroutines))
		r = append(r, float64(s.stats.RSS))
	}
	return slope(t, h), slope(t, g), slope(t, r)
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

// soakMetrics scrapes fray's metrics: the faults fired by kind, and the
// exchanges carried.
func soakMetrics(ctx context.Context, fray *scale.Child) (faults string, exchanges float64, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+fray.Control+"/metrics", nil)
	if err != nil {
		return "", 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return "", 0, fmt.Errorf("fray's metrics: %w", err)
	}
	var out []string
	for _, m := range fams["fray_faults_total"].GetMetric() {
		if v := m.GetCounter().GetValue(); v > 0 {
			out = append(out, fmt.Sprintf("%s=%.0f", m.GetLabel()[0].GetValue(), v))
		}
	}
	sort.Strings(out)
	for _, m := range fams["fray_exchanges_total"].GetMetric() {
		exchanges += m.GetCounter().GetValue()
	}
	return strings.Join(out, " "), exchanges, nil
}

// TestSlope: the fit recovers a known slope through noise-free points, is
// 0 for a flat line, and does not divide by zero.
func TestSlope(t *testing.T) {
	for _, tc := range []struct {
		name string
		x, y []float64
		want float64
	}{
		{"rising", []float64{0, 1, 2, 3}, []float64{5, 7, 9, 11}, 2},
		{"flat", []float64{0, 1, 2}, []float64{4, 4, 4}, 0},
		{"falling", []float64{1, 2, 4}, []float64{3, 2, 0}, -1},
		{"one point", []float64{1}, []float64{3}, 0},
		{"one x", []float64{2, 2}, []float64{1, 3}, 0},
	} {
		if got := slope(tc.x, tc.y); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: slope %v, want %v", tc.name, got, tc.want)
		}
	}
}
