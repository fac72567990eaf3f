package scale_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/internal/benchsse"
	"github.com/frayproxy/fray/proxy/internal/scale"
)

// BenchmarkApart measures one SSE stream through ReverseProxy and through
// fray, each in a process of its own, as users run `fray proxy`: the
// client and the upstream share the test's process, each proxy is a child
// (the same children as BenchmarkScale: fray is the engine as `fray proxy
// --admin` runs it, the verifier and the metrics attached). Where
// BenchmarkStream (package proxy) runs all three in one process, there a
// proxy built of net/http's parts finds their code and data warm from the
// client's and the upstream's use of the same functions a moment before,
// which a proxy in a process of its own does not; fray's own code has no
// such help in either. The stream is BenchmarkStream's (benchsse: ~95-byte
// progress notifications, each carrying its send time), in its two
// regimes:
//
//   - paced: the upstream writes one event every apartPace (200 µs), and
//     the client reports the one-way p50-µs and p99-µs; a proxy's added
//     latency is its figure minus direct's.
//   - bulk: the upstream writes apartBulk events per write, as fast as the
//     client takes them (events/s).
//
// Each reports, per setup, the proxy process's own CPU time per event
// (proxy-cpu-ns/event, from getrusage in the child: not the client's or
// the upstream's), and logs fray's ratios to ReverseProxy's beside the
// floors of BenchmarkStream's acceptance, for information. The setups take
// turns over apartRounds rounds, each round starting one setup later.
//
//	go test -run XXX -bench BenchmarkApart -benchtime 400000x ./proxy/internal/scale/
func BenchmarkApart(b *testing.B) {
	ctx := context.Background()
	up, setups := startApart(ctx, b)
	b.Run("paced", func(b *testing.B) { apartRegime(b, ctx, setups, up, true) })
	b.Run("bulk", func(b *testing.B) { apartRegime(b, ctx, setups, up, false) })
}

// startApart starts the upstream in this process and the proxies as
// children; all stop when tb's test ends.
func startApart(ctx context.Context, tb testing.TB) (*benchsse.Upstream, []*apartSetup) {
	up := benchsse.NewUpstream()
	tb.Cleanup(up.Close)
	setups := []*apartSetup{{name: direct, url: up.URL}}
	for _, mode := range []string{reverseProxy, fray} {
		c, err := scale.StartChild(ctx, scale.ChildConfig{Mode: mode, Listen: "127.0.0.1:0", Upstream: up.URL})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = c.Close() })
		setups = append(setups, &apartSetup{name: mode, url: "http://" + c.Addr, child: c})
	}
	return up, setups
}

// apartSetup is one way to the upstream: direct, or through a proxy child.
type apartSetup struct {
	name   string
	url    string
	child  *scale.Child // nil for direct
	client *http.Client
}

// apartTally is what the rounds of one setup measured.
type apartTally struct {
	events  int
	elapsed time.Duration
	cpu     time.Duration // the proxy child's
	lat     []time.Duration
}

const (
	apartPace   = 200 * time.Microsecond
	apartBulk   = 1000
	apartRounds = 4
	// apartMaxPaced bounds the paced regime, which takes apartPace per
	// event and setup.
	apartMaxPaced = 5000
)

// apartRegime streams b.N events (paced: at most apartMaxPaced) through
// every setup in rounds taken in turn, and reports and logs the figures.
func apartRegime(b *testing.B, ctx context.Context, setups []*apartSetup, up *benchsse.Upstream, paced bool) {
	n, pace, batch := b.N, time.Duration(0), apartBulk
	if paced {
		n, pace, batch = min(b.N, apartMaxPaced), apartPace, 1
	}
	per := max(n/apartRounds, 1)
	for _, s := range setups {
		s.client = &http.Client{Transport: &http.Transport{ForceAttemptHTTP2: false, MaxIdleConnsPerHost: 2}}
		defer s.client.CloseIdleConnections()
		// Open the connections before the clock starts.
		if err := benchsse.Read(ctx, s.client, benchsse.URL(s.url, 1, 0, batch), 1, up.Base, nil); err != nil {
			b.Fatal(err)
		}
	}
	tally := make([]apartTally, len(setups))
	b.ResetTimer()
	for r := range apartRounds {
		for k := range setups {
			i := (r + k) % len(setups)
			var lat []time.Duration
			if paced {
				lat = make([]time.Duration, per)
			}
			cpu0, err := childCPU(ctx, setups[i])
			if err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			err = benchsse.Read(ctx, setups[i].client, benchsse.URL(setups[i].url, per, pace, batch), per, up.Base, lat)
			elapsed := time.Since(start)
			if err != nil {
				b.Fatal(err)
			}
			cpu1, err := childCPU(ctx, setups[i])
			if err != nil {
				b.Fatal(err)
			}
			t := &tally[i]
			t.events += per
			t.elapsed += elapsed
			t.cpu += cpu1 - cpu0
			t.lat = append(t.lat, lat...)
		}
	}
	b.StopTimer()
	b.ReportMetric(0, "ns/op")
	fig := map[string]*apartTally{}
	for i, s := range setups {
		t := &tally[i]
		fig[s.name] = t
		if paced {
			slices.Sort(t.lat)
			b.ReportMetric(benchsse.Micros(benchsse.Quantile(t.lat, 0.5)), s.name+":p50-µs")
			b.ReportMetric(benchsse.Micros(benchsse.Quantile(t.lat, 0.99)), s.name+":p99-µs")
		} else {
			b.ReportMetric(float64(t.events)/t.elapsed.Seconds(), s.name+":events/s")
		}
		if s.child != nil {
			b.ReportMetric(float64(t.cpu.Nanoseconds())/float64(t.events), s.name+":proxy-cpu-ns/event")
		}
	}
	d, rp, f := fig[direct], fig[reverseProxy], fig[fray]
	cpu := (float64(f.cpu) / float64(f.events)) / (float64(rp.cpu) / float64(rp.events))
	if paced {
		added := func(t *apartTally) time.Duration {
			return benchsse.Quantile(t.lat, 0.5) - benchsse.Quantile(d.lat, 0.5)
		}
		ratio := float64(added(f)) / float64(added(rp))
		b.Logf("paced, added p50: reverseproxy %.1f µs, fray %.1f µs: fray/reverseproxy %.2f (BenchmarkStream's floor: <= 1.2, %s)",
			benchsse.Micros(added(rp)), benchsse.Micros(added(f)), ratio, verdict(ratio <= 1.2))
		b.Logf("paced, the proxy process's CPU per event: fray/reverseproxy %.2f (for information)", cpu)
		return
	}
	ev := (float64(f.events) / f.elapsed.Seconds()) / (float64(rp.events) / rp.elapsed.Seconds())
	b.Logf("bulk, events/s: fray/reverseproxy %.2f (BenchmarkStream's floor: >= 0.5, %s)", ev, verdict(ev >= 0.5))
	b.Logf("bulk, the proxy process's own CPU per event: reverseproxy %.0f ns, fray %.0f ns: fray/reverseproxy %.1f (for information: BenchmarkStream's floor of 3 is of the whole process, client and upstream included)",
		float64(rp.cpu.Nanoseconds())/float64(rp.events), float64(f.cpu.Nanoseconds())/float64(f.events), cpu)
}

// childCPU is the CPU time s's proxy process has used so far; 0 for
// direct.
func childCPU(ctx context.Context, s *apartSetup) (time.Duration, error) {
	if s.child == nil {
		return 0, nil
	}
	st, err := s.child.Stats(ctx, false)
	return st.CPU, err
}

// TestApartHarness runs BenchmarkApart's harness with a few events: each
// setup carries a paced and a bulk stream whole and in order, a paced
// event's latency is never negative, and the proxy children are the ones
// that carried the streams (their CPU time grew).
func TestApartHarness(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	up, setups := startApart(ctx, t)
	for _, s := range setups {
		t.Run(s.name, func(t *testing.T) {
			s.client = &http.Client{Transport: &http.Transport{}}
			defer s.client.CloseIdleConnections()
			cpu0, err := childCPU(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			lat := make([]time.Duration, 20)
			if err := benchsse.Read(ctx, s.client, benchsse.URL(s.url, len(lat), time.Millisecond, 1), len(lat), up.Base, lat); err != nil {
				t.Fatal(err)
			}
			for i, l := range lat {
				if l <= 0 || l > time.Minute {
					t.Errorf("event %d: latency %v", i, l)
				}
			}
			n := 2*apartBulk + 7 // a short last write
			if err := benchsse.Read(ctx, s.client, benchsse.URL(s.url, n, 0, apartBulk), n, up.Base, nil); err != nil {
				t.Fatal(err)
			}
			cpu1, err := childCPU(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			if s.child != nil && cpu1 <= cpu0 {
				t.Errorf("the %s child used no CPU time while it carried the streams (%v, then %v)", s.name, cpu0, cpu1)
			}
		})
	}
}
