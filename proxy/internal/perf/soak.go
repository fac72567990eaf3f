package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
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
	// soakMaxSlope bounds the live heap's growth after the warm-up.
	soakMaxSlope = 1.0 // MiB an hour
	// soakSettle bounds the wait, at a checkpoint, for fray to end the
	// streams of the sessions its clients ended.
	soakSettle = 10 * time.Second
	// soakPause bounds the wait, at a checkpoint, for the clients to end
	// their sessions: a session the soak profile's faults slow down
	// takes seconds; one still open after this is stuck.
	soakPause = 2 * time.Minute
)

// soakEvery is how often a soak of length run takes a checkpoint: every
// minute, more often in a short soak.
func soakEvery(run time.Duration) time.Duration {
	return min(max(run/30, 2*time.Second), time.Minute)
}

// soakSample is fray's live heap at one checkpoint of the soak.
type soakSample struct {
	at       time.Duration
	sessions int64
	live     float64 // bytes
}

// soakFigure is the fifth measurement: `fray proxy --profile soak
// --admin` under soakClients MCP clients whose sessions come and go, for
// run. At each checkpoint (soakEvery) it reads fray's live heap with no
// session open (checkpoint); the figure is the slope of those readings
// after the warm-up, in MiB an hour.
//
// Read while sessions come and go, the live heap holds what the sessions
// open at that instant hold, and scatters by megabytes from one reading
// to the next; with every client between sessions and after a
// collection, what is left is what fray keeps.
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
	var gate sync.RWMutex
	load, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stopLoad()
	for i := range soakClients {
		c := &scale.SoakClient{URL: "http://" + p.addr + "/mcp", HTTP: client, Calls: soakCalls,
			FirstCalls: 1 + i*soakCalls/soakClients, Counts: &counts, Gate: &gate}
		wg.Go(func() { c.Run(load) })
	}
	var samples []soakSample
	start := time.Now()
	tick := time.NewTicker(soakEvery(run))
	defer tick.Stop()
	for time.Since(start) < run {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		live, err := checkpoint(ctx, &gate, transport.CloseIdleConnections, p.admin, soakSettle)
		if err != nil {
			return nil, err
		}
		s := soakSample{at: time.Since(start), sessions: counts.Sessions.Load(), live: live}
		samples = append(samples, s)
		fmt.Fprintf(w, "    soak %4.0fs: %d sessions, live heap %.2f MiB\n", s.at.Seconds(), s.sessions, s.live/(1<<20))
	}
	stopLoad()
	return soakVerdict(samples, run, counts.Answered.Load(), counts.Failed.Load()), nil
}

// checkpoint pauses the clients between sessions (gate; at most
// soakPause for the last session to end), closes their
// idle connections (closeIdle: fray holds buffers for each, and how many
// the clients keep varies with the load), waits at most settle for fray
// to end their streams, has it collect twice (the second collection
// frees what the first left in sync.Pools' victim caches) and returns
// its live heap then.
func checkpoint(ctx context.Context, gate *sync.RWMutex, closeIdle func(), admin string, settle time.Duration) (float64, error) {
	unpause, err := pause(ctx, gate, soakPause)
	if err != nil {
		return 0, err
	}
	defer unpause()
	closeIdle()
	deadline := time.Now().Add(settle)
	for {
		open, err := scrapeGauge(ctx, admin, "fray_open_streams")
		if err != nil {
			return 0, err
		}
		if open == 0 {
			break
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("perf: fray still pumps %.0f streams %v after its clients ended their sessions", open, settle)
		}
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	for range 2 {
		if err := get(ctx, "http://"+admin+"/debug/pprof/heap?gc=1", io.Discard); err != nil {
			return 0, fmt.Errorf("perf: fray's heap profile: %w", err)
		}
	}
	return scrapeGauge(ctx, admin, "go_memstats_heap_alloc_bytes")
}

// pause takes gate for writing, once every session the clients hold it
// for has ended, waiting at most d; unpause gives it back. When the wait
// fails, gate is given back as soon as it is taken.
func pause(ctx context.Context, gate *sync.RWMutex, d time.Duration) (unpause func(), err error) {
	locked := make(chan struct{})
	go func() {
		gate.Lock()
		close(locked)
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-locked:
		return gate.Unlock, nil
	case <-t.C:
		err = fmt.Errorf("perf: a soak client's session was still open %v after the checkpoint asked the clients to pause", d)
	case <-ctx.Done():
		err = ctx.Err()
	}
	go func() {
		<-locked
		gate.Unlock()
	}()
	return nil, err
}

// soakVerdict fits the samples after the warm-up: from the first sample
// past soakWarmSessions sessions, and not before a third of the run. A
// soak shorter than soakFull is reported, not judged.
func soakVerdict(samples []soakSample, run time.Duration, answered, failed int64) []figure {
	var sessions int64
	if len(samples) > 0 {
		sessions = samples[len(samples)-1].sessions
	}
	var x, live []float64
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
	}
	f := figure{
		Name:  "5. soak: live heap after warm-up, MiB an hour",
		Value: slope(x, live), Limit: soakMaxSlope, Unit: "",
		Detail: fmt.Sprintf("%v, %d sessions, %d calls answered, %d sessions or calls failed; fitted over %d checkpoints, each with every client between sessions and after two collections: live heap %s",
			run, sessions, answered, failed, len(x), spread(live)),
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

// spread says the least and the most of v, in MiB.
func spread(v []float64) string {
	if len(v) == 0 {
		return "not read"
	}
	return fmt.Sprintf("%.2f to %.2f MiB", slices.Min(v), slices.Max(v))
}

// scrapeGauge reads one gauge from fray's admin API's metrics.
func scrapeGauge(ctx context.Context, admin, name string) (float64, error) {
	var body bytes.Buffer
	if err := get(ctx, "http://"+admin+"/metrics", &body); err != nil {
		return 0, fmt.Errorf("perf: fray's metrics: %w", err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(&body)
	if err != nil {
		return 0, fmt.Errorf("perf: fray's metrics: %w", err)
	}
	m := fams[name].GetMetric()
	if len(m) == 0 {
		return 0, fmt.Errorf("perf: fray's metrics have no %s", name)
	}
	return m[0].GetGauge().GetValue(), nil
}

// get copies the body of a GET of url, answered 200, to w.
func get(ctx context.Context, url string, w io.Writer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	_, err = io.Copy(w, resp.Body)
	return err
}
