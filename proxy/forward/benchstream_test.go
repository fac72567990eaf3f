package forward_test

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/internal/benchsse"
)

// TestBenchStreamHarness runs BenchmarkStream's harness briefly through
// each setup, in both regimes: every event arrives once and in order,
// latencies are measured, the process's CPU time is read, and nothing is
// left running.
func TestBenchStreamHarness(t *testing.T) {
	checkNoLeaks(t)
	setups, up, done := newBenchSetups(t, t.TempDir())
	t.Cleanup(done)
	client := &http.Client{Transport: newBenchTransport()}
	t.Cleanup(client.CloseIdleConnections)
	var names []string
	for _, s := range setups {
		names = append(names, s.name)
		for _, batch := range []int{1, 7, benchBulk} {
			n := 2*batch + 3 // a short last write
			if err := benchsse.Read(context.Background(), client, benchsse.URL(s.url, n, 0, batch), n, up.Base, nil); err != nil {
				t.Error(err)
			}
		}
		lat := make([]time.Duration, 20)
		if err := benchsse.Read(context.Background(), client, benchsse.URL(s.url, len(lat), 50*time.Microsecond, 1), len(lat), up.Base, lat); err != nil {
			t.Error(err)
		}
		for i, d := range lat {
			if d <= 0 || d > time.Minute {
				t.Errorf("%s: event %d: latency %v", s.name, i, d)
			}
		}
	}
	if fmt.Sprint(names) != "[direct reverseproxy fray fray-shipped fray-traced]" {
		t.Errorf("setups %v", names)
	}
	if err := benchsse.Read(context.Background(), client, up.URL+"/other?n=1&pace=0&batch=1", 1, up.Base, nil); err == nil {
		t.Error("a wrong path was answered 200")
	}
	if err := benchsse.Read(context.Background(), client, benchsse.URL(up.URL, 3, 0, 1), 4, up.Base, nil); err == nil {
		t.Error("a stream one event short was read as whole")
	}
	if runtime.GOOS == "linux" {
		c0, ok0 := processCPU()
		for i := 0; i < 1e6; i++ {
			runtime.Gosched()
		}
		c1, ok1 := processCPU()
		if !ok0 || !ok1 || c1 <= c0 {
			t.Errorf("process CPU %v then %v (%v, %v): not read", c0, c1, ok0, ok1)
		}
		// The host's steal is read, and never goes back.
		s0, sok0 := benchsse.HostSteal()
		s1, sok1 := benchsse.HostSteal()
		if !sok0 || !sok1 || s0 < 0 || s1 < s0 {
			t.Errorf("host steal %v then %v (%v, %v): not read", s0, s1, sok0, sok1)
		}
	}
}
