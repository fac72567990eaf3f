package main

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy"
	"github.com/frayproxy/fray/proxy/internal/scale"
)

// TestCheckpoint: with soak clients running through an engine, a
// checkpoint pauses them between sessions, finds no stream open, reads a
// live heap, and lets them go on; a stream that stays open past the wait
// is an error that says how many.
func TestCheckpoint(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Quick calls; standalone streams that last 3 s unless their session ends.
	up := httptest.NewServer(&scale.SoakUpstream{Progress: 2, Pace: time.Millisecond, Retry: 10 * time.Millisecond,
		StandalonePace: 10 * time.Millisecond, StandaloneLife: 3 * time.Second})
	defer up.Close()
	u, _ := url.Parse(up.URL)
	eng, err := proxy.New(proxy.Options{Upstream: u, Metrics: true})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Stop()
	fray := httptest.NewServer(eng.Handler())
	defer fray.Close()
	admin := httptest.NewServer(eng.AdminHandler())
	defer admin.Close()
	adminAddr := strings.TrimPrefix(admin.URL, "http://")

	transport := scale.NewTransport()
	defer transport.CloseIdleConnections()
	var counts scale.SoakCounts
	var gate sync.RWMutex
	load, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range 4 {
		c := &scale.SoakClient{URL: fray.URL + "/mcp", HTTP: &http.Client{Transport: transport}, Calls: 1, Counts: &counts, Gate: &gate}
		wg.Go(func() { c.Run(load) })
	}
	defer wg.Wait()
	defer stopLoad()
	sessionsPast := func(n int64) {
		t.Helper()
		for counts.Sessions.Load() <= n {
			select {
			case <-ctx.Done():
				t.Fatalf("sessions stayed at %d", counts.Sessions.Load())
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	sessionsPast(4)
	live, err := checkpoint(ctx, &gate, transport.CloseIdleConnections, adminAddr, 5*time.Second)
	if err != nil || live <= 0 {
		t.Fatalf("checkpoint: %.0f bytes, %v", live, err)
	}
	sessionsPast(counts.Sessions.Load())

	// A standalone stream of a session no gate holds stays open 3 s; fray
	// reports a GET stream once its first event tells what it is.
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fray.URL+"/mcp", nil)
	req.Header.Set("Mcp-Session-Id", "outside")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	if _, err := checkpoint(ctx, &gate, transport.CloseIdleConnections, adminAddr, 200*time.Millisecond); err == nil || !strings.Contains(err.Error(), "still pumps 1 streams") {
		t.Errorf("a checkpoint with a stream left open: %v", err)
	}
}

// TestPauseBounded: a session that does not end makes the pause fail
// after its bound, and the gate is given back once the session ends.
func TestPauseBounded(t *testing.T) {
	var gate sync.RWMutex
	gate.RLock() // a session
	if _, err := pause(context.Background(), &gate, 50*time.Millisecond); err == nil || !strings.Contains(err.Error(), "still open 50ms") {
		t.Fatalf("pause over an open session: %v", err)
	}
	gate.RUnlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	unpause, err := pause(ctx, &gate, 10*time.Second)
	if err != nil {
		t.Fatalf("pause once the session ended: %v", err)
	}
	if gate.TryRLock() {
		t.Error("a session began during the pause")
	}
	unpause()
	if !gate.TryRLock() {
		t.Error("no session can begin after the pause")
	}
}
