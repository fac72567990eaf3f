package forward_test

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy"
	"github.com/frayproxy/fray/proxy/forward"
	"github.com/frayproxy/fray/proxy/internal/benchsse"
	"github.com/frayproxy/fray/proxy/trace"
)

// BenchmarkStream measures one SSE stream through five setups,
//
//	direct:        client <-> upstream
//	reverseproxy:  client <-> httputil.ReverseProxy (FlushInterval -1) <-> upstream
//	fray:          client <-> forward.Proxy, nothing observing <-> upstream
//	fray-shipped:  client <-> the engine as `fray proxy --admin` runs it
//	               (proxy.ProxyOptions): the verifier and the metrics
//	               observing every event, a profile the admin API may
//	               swap in (none yet) <-> upstream
//	fray-traced:   fray-shipped with a trace written to a file (--trace)
//
// over HTTP/1.1 keep-alive connections on 127.0.0.1, in two regimes, one
// sub-benchmark each:
//
//   - paced: the upstream writes and flushes one event at a time, as fast
//     as the client takes them (events/s), then paces min(b.N,
//     benchMaxPaced) events with a ticker, each carrying its send time, in
//     benchLatRounds turns, and the client reports the one-way p50-µs and
//     p99-µs. Direct's latency is the base; a proxy's added latency is its
//     figure minus direct's.
//   - bulk: the upstream writes benchBulk events (~95-byte progress
//     notifications) per write, as fast as the client takes them
//     (events/s).
//
// Each sub-benchmark streams b.N events through every setup, in
// benchRounds rounds that take the setups in turn (each round starting
// one setup later), so that the setups share whatever else the machine
// does. Every metric is reported per setup, its unit prefixed with the
// setup's name: events/s, p50-µs, p99-µs (paced), and cpu-ns/event, the
// user and system CPU time of the whole process (upstream, proxy and
// client: all run in it) from getrusage around the timed reads, divided
// by the events; and, on Linux, steal-%: the share of the machine's CPU
// time its hypervisor gave to other work while the setup's reads ran
// (benchsse.HostSteal), which says how contended the figures beside it
// are. ns/op is meaningless here. It profiles the event path in one
// process; fray proxy's budgets, each proxy in a process of its own, are
// measured by `go run ./proxy/internal/perf` (docs/performance.md).
func BenchmarkStream(b *testing.B) {
	setups, up := newBenchSetups(b, b.TempDir())
	if *benchOnly != "" {
		setups = slices.DeleteFunc(setups, func(s benchSetup) bool {
			return !slices.Contains(strings.Split(*benchOnly, ","), s.name)
		})
	}
	b.Run("paced", func(b *testing.B) { benchRegime(b, setups, up, 1, true) })
	b.Run("bulk", func(b *testing.B) { benchRegime(b, setups, up, benchBulk, false) })
}

// benchOnly narrows BenchmarkStream to some setups, to profile one:
//
//	go test -run XXX -bench BenchmarkStream/bulk -cpuprofile cpu.out ./proxy/forward/ -args -stream.setups fray-shipped
var benchOnly = flag.String("stream.setups", "", "comma-separated setups BenchmarkStream runs (all when empty)")

const (
	// benchPace is the gap between events in the latency phase (at least:
	// timers may be coarser): wide
	// enough that an event never queues behind the one before it.
	benchPace = 200 * time.Microsecond
	// benchMaxPaced bounds the latency phase, which takes benchPace per
	// event whatever b.N the throughput phase asks for.
	benchMaxPaced = 5000
	// benchBulk is how many events the upstream writes at once in the
	// bulk regime.
	benchBulk = 1000
	// benchRounds is how many times each setup takes its turn.
	benchRounds = 4
	// benchLatRounds is how many times each setup takes its turn in the
	// latency phase: 250 paced events, 50 ms, a turn. An added latency is
	// a few microseconds, the difference of two p50s; the host's load
	// changes over seconds, and turns this short let every setup sample
	// the same load, where turns of 250 ms moved the ratio by 2× from run
	// to run.
	benchLatRounds = 20
)

// benchSetup is one way to the upstream.
type benchSetup struct {
	name string
	url  string // base URL; the stream is at benchsse.Path
}

// newBenchSetups starts the upstream and the proxies, stopped in turn
// when tb ends; the trace, when one is written, goes under dir.
func newBenchSetups(tb testing.TB, dir string) (setups []benchSetup, up *benchsse.Upstream) {
	up = benchsse.NewUpstream()
	tb.Cleanup(up.Close)
	upURL, err := url.Parse(up.URL)
	if err != nil {
		tb.Fatal(err)
	}
	serve := func(name string, h http.Handler, tr *http.Transport) {
		srv := httptest.NewServer(h)
		tb.Cleanup(srv.Close)
		if tr != nil {
			tb.Cleanup(tr.CloseIdleConnections)
		}
		setups = append(setups, benchSetup{name, srv.URL})
	}
	setups = append(setups, benchSetup{"direct", up.URL})

	// Each proxy gets a transport of its own. The reverse proxy's and
	// bare fray's are http.DefaultTransport's settings (what a
	// ReverseProxy with no Transport uses), so that those two compare the
	// proxies and not their connection pools; the shipped setups leave
	// the transport to the engine, as `fray proxy` does, so that they
	// measure what users run: the stream, a GET, goes on a connection of
	// its own, everything else through forward.NewTransport.
	rpTransport := newBenchTransport()
	rp := httputil.NewSingleHostReverseProxy(upURL)
	rp.FlushInterval = -1
	rp.Transport = rpTransport
	serve("reverseproxy", rp, rpTransport)

	frayTransport := newBenchTransport()
	serve("fray", newProxy(tb, up.URL, forward.Options{Transport: frayTransport}), frayTransport)

	// What `fray proxy --upstream URL --admin ADDR` runs, its options
	// made by the function the command uses: the engine on its own
	// transport, the verifier and the metrics observing every event, and
	// a profile that the admin API may swap (none yet); then the same
	// with --trace.
	for _, traced := range []bool{false, true} {
		cmd := proxy.ProxyCommand{Upstream: upURL, Admin: true, RequestBodyTimeout: forward.DefaultRequestBodyTimeout}
		name := "fray-shipped"
		if traced {
			w, err := trace.Create(filepath.Join(dir, "bench.jsonl"), trace.WriterOptions{})
			if err != nil {
				tb.Fatal(err)
			}
			tb.Cleanup(func() { _ = w.Close() })
			cmd.Trace, name = w, "fray-traced"
		}
		eng, err := proxy.New(proxy.ProxyOptions(cmd))
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { eng.Stop() })
		serve(name, eng.Handler(), nil)
	}
	return setups, up
}

// benchTally is what one setup measured over the rounds.
type benchTally struct {
	events  int
	elapsed time.Duration
	cpu     time.Duration
	cpuOK   bool
	steal   time.Duration
	stealOK bool
	lat     []time.Duration
}

// benchRegime streams b.N events through every setup, batch events per
// upstream write, in rounds; with paced, it measures latency too.
func benchRegime(b *testing.B, setups []benchSetup, up *benchsse.Upstream, batch int, paced bool) {
	clients := make([]*http.Client, len(setups))
	for i, s := range setups {
		clients[i] = &http.Client{Transport: newBenchTransport()}
		defer clients[i].CloseIdleConnections()
		// Open the connections (client's and proxy's) before the clock
		// starts.
		if err := benchsse.Read(context.Background(), clients[i], benchsse.URL(s.url, 1, 0, batch), 1, up.Base, nil); err != nil {
			b.Fatal(err)
		}
	}
	tally := make([]benchTally, len(setups))
	per := max(b.N/benchRounds, 1)
	b.ResetTimer()
	for r := range benchRounds {
		for k := range setups {
			i := (r + k) % len(setups)
			t := &tally[i]
			steal0, sok0 := benchsse.HostSteal()
			cpu0, ok0 := processCPU()
			start := time.Now()
			err := benchsse.Read(context.Background(), clients[i], benchsse.URL(setups[i].url, per, 0, batch), per, up.Base, nil)
			elapsed := time.Since(start)
			cpu1, ok1 := processCPU()
			steal1, sok1 := benchsse.HostSteal()
			if err != nil {
				b.Fatal(err)
			}
			t.events += per
			t.elapsed += elapsed
			t.cpu += cpu1 - cpu0
			t.cpuOK = ok0 && ok1
			t.steal += steal1 - steal0
			t.stealOK = sok0 && sok1
		}
	}
	b.StopTimer()
	if paced {
		n := max(min(b.N, benchMaxPaced)/benchLatRounds, 1)
		for r := range benchLatRounds {
			for k := range setups {
				i := (r + k) % len(setups)
				lat := make([]time.Duration, n)
				if err := benchsse.Read(context.Background(), clients[i], benchsse.URL(setups[i].url, n, benchPace, 1), n, up.Base, lat); err != nil {
					b.Fatal(err)
				}
				tally[i].lat = append(tally[i].lat, lat...)
			}
		}
	}
	for i, s := range setups {
		t := &tally[i]
		b.ReportMetric(float64(t.events)/t.elapsed.Seconds(), s.name+":events/s")
		if t.cpuOK {
			b.ReportMetric(float64(t.cpu.Nanoseconds())/float64(t.events), s.name+":cpu-ns/event")
		}
		if t.stealOK {
			b.ReportMetric(benchsse.StealPercent(t.steal, t.elapsed), s.name+":steal-%")
		}
		if paced {
			slices.Sort(t.lat)
			b.ReportMetric(benchsse.Micros(benchsse.Quantile(t.lat, 0.50)), s.name+":p50-µs")
			b.ReportMetric(benchsse.Micros(benchsse.Quantile(t.lat, 0.99)), s.name+":p99-µs")
		}
	}
}

func newBenchTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ForceAttemptHTTP2 = false
	t.MaxIdleConnsPerHost = 4
	return t
}

// TestBenchStreamHarness runs BenchmarkStream's harness briefly through
// each setup, in both regimes: every event arrives once and in order,
// latencies are measured, the process's CPU time is read, and nothing is
// left running.
func TestBenchStreamHarness(t *testing.T) {
	checkNoLeaks(t)
	setups, up := newBenchSetups(t, t.TempDir())
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
