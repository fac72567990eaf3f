package scale_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/internal/scale"
)

// TestStreams: every open stream receives every event of each round
// fired, a stream opened after a round owes none of it, and the upstream
// counts the streams it holds.
func TestStreams(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	up := scale.NewUpstream()
	srv := httptest.NewServer(up)
	defer srv.Close()
	const n = 20
	s, err := scale.Open(ctx, srv.URL+"/mcp", n, 8)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for round, k := range []int{3, 2} {
		s.Expect(int64(n * []int{3, 5}[round]))
		up.Fire(k)
		if err := s.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.Events(); got != n*5 {
		t.Errorf("%d events, want %d", got, n*5)
	}
	late, err := scale.Open(ctx, srv.URL+"/mcp", 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer late.Close()
	s.Expect(n*5 + n)
	late.Expect(1)
	up.Fire(1)
	if err := late.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if got := late.Events(); got != 1 {
		t.Errorf("a stream opened after two rounds got %d events of the third, want 1", got)
	}
	if got := up.Streams(); got != n+1 {
		t.Errorf("the upstream holds %d streams, want %d", got, n+1)
	}
}

// TestSoakClients: soak clients against the soak upstream open sessions
// and get their calls answered, with no failure, until told to stop.
func TestSoakClients(t *testing.T) {
	up := httptest.NewServer(scale.NewSoakUpstream())
	defer up.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var counts scale.SoakCounts
	load, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range 4 {
		c := &scale.SoakClient{URL: up.URL + "/mcp", HTTP: &http.Client{}, Calls: 2, Counts: &counts}
		wg.Go(func() { c.Run(load) })
	}
	for counts.Sessions.Load() < 8 && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond) // polling counters the clients keep
	}
	stop()
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatalf("%d sessions within 20 s, want 8", counts.Sessions.Load())
	}
	if counts.Answered.Load() == 0 || counts.Failed.Load() != 0 {
		t.Errorf("%d calls answered, %d sessions or calls failed: want answers and no failure", counts.Answered.Load(), counts.Failed.Load())
	}
}
