package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/frayproxy/fray/proxy/internal/scale"
)

// Soak settings.
const (
	// soakClients MCP clients run at once, each session making
	// soakCalls calls of ~200 ms before it ends and the next starts:
	// about 80 new sessions a second.
	soakClients = 200
	soakCalls   = 2
	// soakFull is the length from which the soak is judged.
	soakFull = 30 * time.Minute
	// soakSessions is the sessions a judged soak must carry.
	soakSessions = 100_000
	// soakWarmSessions ends the warm-up: fray remembers the last 65,536
	// sessions (their ids in the verifier, the metrics and the session
	// table), so its heap grows until that many have come and gone.
	soakWarmSessions = 70_000
	soakSampleEvery  = 2 * time.Second
	// soakMaxSlope bounds the live heap's growth after the warm-up.
	soakMaxSlope = 1.0 // MiB an hour
)

// soakSample is fray's memory at one moment of the soak.
type soakSample struct {
	at              time.Duration
	sessions        int64
	live, heapInUse float64 // bytes
}

// soakFigure is the fifth measurement: `fray proxy --profile soak
// --admin` under soakClients MCP clients whose sessions come and go, for
// run. Every soakSampleEvery it reads fray's heap from its admin API;
// the figure is the slope of the live heap after the warm-up, in MiB an
// hour.
func soakFigure(ctx context.Context, frayBin string, run time.Duration, w io.Writer) ([]figure, error) {
	if _, err := scale.RaiseFileLimit(4 * soakClients); err != nil {
		return nil, err
	}
	up := httptest.NewServer(scale.NewSoakUpstream())
	defer up.Close()
	p, err := startFray(ctx, frayBin, up.URL, "--profile", "soak", "--admin", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer p.stop()
	if p.admin == "" {
		return nil, fmt.Errorf("perf: fray proxy --admin printed no admin address")
	}
	transport := scale.NewTransport()
	transport.MaxIdleConnsPerHost = 4 * soakClients
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport}
	var counts scale.SoakCounts
	load, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stopLoad()
	for i := range soakClients {
		c := &scale.SoakClient{URL: "http://" + p.addr + "/mcp", HTTP: client, Calls: soakCalls,
			FirstCalls: 1 + i*soakCalls/soakClients, Counts: &counts}
		wg.Go(func() { c.Run(load) })
	}
	var samples []soakSample
	start := time.Now()
	tick := time.NewTicker(soakSampleEvery)
	defer tick.Stop()
	for time.Since(start) < run {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		s, err := scrapeHeap(ctx, p.admin)
		if err != nil {
			return nil, err
		}
		s.at, s.sessions = time.Since(start), counts.Sessions.Load()
		samples = append(samples, s)
		if len(samples)%30 == 0 {
			fmt.Fprintf(w, "    soak %4.0fs: %d sessions, live heap %.1f MiB, heap in use %.1f MiB\n",
				s.at.Seconds(), s.sessions, s.live/(1<<20), s.heapInUse/(1<<20))
		}
	}
	stopLoad()
	return soakVerdict(samples, run, counts.Answered.Load(), counts.Failed.Load()), nil
}

// soakVerdict fits the samples after the warm-up: from the first sample
// past soakWarmSessions sessions, and not before a third of the run. A
// soak shorter than soakFull is reported, not judged.
func soakVerdict(samples []soakSample, run time.Duration, answered, failed int64) []figure {
	var sessions int64
	if len(samples) > 0 {
		sessions = samples[len(samples)-1].sessions
	}
	var x, live, inUse []float64
	warm := false
	for _, s := range samples {
		warm = warm || (s.sessions >= soakWarmSessions && s.at >= run/3)
		if !warm && run >= soakFull {
			continue
		}
		if run < soakFull && s.at < run/3 {
			continue
		}
		x = append(x, s.at.Hours())
		live = append(live, s.live/(1<<20))
		inUse = append(inUse, s.heapInUse/(1<<20))
	}
	f := figure{
		Name:  "5. soak: live heap after warm-up, MiB an hour",
		Value: slope(x, live), Limit: soakMaxSlope, Unit: "",
		Detail: fmt.Sprintf("%v, %d sessions, %d calls answered, %d failed to start; fitted over %d samples; heap in use %+.1f MiB an hour",
			run, sessions, answered, failed, len(x), slope(x, inUse)),
	}
	switch {
	case run < soakFull:
		f.Unjudged = fmt.Sprintf("a short soak (%v): fray's tables of the last 65,536 sessions are still filling; -soak %v judges it", run, soakFull)
	case !warm:
		// The sessions figure below misses then: fewer than 70,000.
		f.Unjudged = "never warm: fewer than 70,000 sessions came and went"
	}
	figs := []figure{f}
	if run >= soakFull {
		figs = append(figs, figure{Name: "5. soak: sessions carried, thousands", Value: float64(sessions) / 1000,
			Limit: soakSessions / 1000, AtLeast: true})
	}
	return figs
}

// scrapeHeap reads fray's heap from its admin API's metrics: the live
// heap as half the heap goal the runtime set at its last collection
// (GOGC=100: the goal is twice what the collection found live, stacks and
// globals included), and the heap in use now.
func scrapeHeap(ctx context.Context, admin string) (soakSample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+admin+"/metrics", nil)
	if err != nil {
		return soakSample{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return soakSample{}, fmt.Errorf("perf: fray's metrics: %w", err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return soakSample{}, fmt.Errorf("perf: fray's metrics: %w", err)
	}
	gauge := func(name string) (float64, error) {
		m := fams[name].GetMetric()
		if len(m) == 0 {
			return 0, fmt.Errorf("perf: fray's metrics have no %s", name)
		}
		return m[0].GetGauge().GetValue(), nil
	}
	goal, err := gauge("go_memstats_next_gc_bytes")
	if err != nil {
		return soakSample{}, err
	}
	inUse, err := gauge("go_memstats_heap_inuse_bytes")
	return soakSample{live: goal / 2, heapInUse: inUse}, err
}
