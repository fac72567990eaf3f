package scale_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"

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
// such help in either. Two regimes, as BenchmarkStream's:
//
//   - paced: the upstream writes one event every benchPace (200 µs), each
//     carrying its send time, and the client reports the one-way p50-µs
//     and p99-µs; a proxy's added latency is its figure minus direct's.
//   - bulk: the upstream writes apartBulk events per write, as fast as the
//     client takes them (events/s).
//
// Each reports, per setup, the proxy process's own CPU time per event
// (proxy-cpu-ns/event, from getrusage in the child: not the client's or
// the upstream's), and logs fray's ratios to ReverseProxy's beside the
// floors of BenchmarkStream's acceptance, for information. The setups take
// turns over apartRounds rounds, each round starting one setup later.
//
//	go test -run XXX -bench BenchmarkApart -benchtime 20000x ./proxy/internal/scale/
func BenchmarkApart(b *testing.B) {
	ctx := context.Background()
	up := newApartUpstream()
	defer up.Close()
	setups := []*apartSetup{{name: direct, url: up.URL}}
	for _, mode := range []string{reverseProxy, fray} {
		c, err := scale.StartChild(ctx, scale.ChildConfig{Mode: mode, Listen: "127.0.0.1:0", Upstream: up.URL})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		setups = append(setups, &apartSetup{name: mode, url: "http://" + c.Addr, child: c})
	}
	b.Run("paced", func(b *testing.B) { apartRegime(b, ctx, setups, up, true) })
	b.Run("bulk", func(b *testing.B) { apartRegime(b, ctx, setups, up, false) })
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
func apartRegime(b *testing.B, ctx context.Context, setups []*apartSetup, up *apartUpstream, paced bool) {
	n, pace, batch := b.N, time.Duration(0), apartBulk
	if paced {
		n, pace, batch = min(b.N, apartMaxPaced), apartPace, 1
	}
	per := max(n/apartRounds, 1)
	for _, s := range setups {
		s.client = &http.Client{Transport: &http.Transport{ForceAttemptHTTP2: false, MaxIdleConnsPerHost: 2}}
		defer s.client.CloseIdleConnections()
		// Open the connections before the clock starts.
		if _, err := apartRead(ctx, s, up, 1, 0, batch, nil); err != nil {
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
				lat = make([]time.Duration, 0, per)
			}
			cpu0, err := childCPU(ctx, setups[i])
			if err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			lat, err = apartRead(ctx, setups[i], up, per, pace, batch, lat)
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
			b.ReportMetric(micros(quantile(t.lat, 0.5)), s.name+":p50-µs")
			b.ReportMetric(micros(quantile(t.lat, 0.99)), s.name+":p99-µs")
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
		added := func(t *apartTally) time.Duration { return quantile(t.lat, 0.5) - quantile(d.lat, 0.5) }
		ratio := float64(added(f)) / float64(added(rp))
		b.Logf("paced, added p50: reverseproxy %.1f µs, fray %.1f µs: fray/reverseproxy %.2f (BenchmarkStream's floor: <= 1.2, %s)",
			micros(added(rp)), micros(added(f)), ratio, verdict(ratio <= 1.2))
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

func quantile(sorted []time.Duration, q float64) time.Duration {
	return sorted[int(q*float64(len(sorted)-1)+0.5)]
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// apartUpstream serves /stream?n=N&pace=NS&batch=B: N events, one batch of
// B per write and flush, every pace when it is not 0. Each event carries
// its sequence number and its send time, in nanoseconds since base on the
// monotonic clock, which the client shares (it runs in the same process).
type apartUpstream struct {
	*httptest.Server
	base time.Time
}

func newApartUpstream() *apartUpstream {
	u := &apartUpstream{base: time.Now()}
	u.Server = httptest.NewServer(http.HandlerFunc(u.serve))
	return u
}

func (u *apartUpstream) serve(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	n, err1 := strconv.Atoi(q.Get("n"))
	pace, err2 := strconv.ParseInt(q.Get("pace"), 10, 64)
	batch, err3 := strconv.Atoi(q.Get("batch"))
	if r.URL.Path != "/stream" || err1 != nil || err2 != nil || err3 != nil || batch < 1 {
		http.Error(w, "want /stream?n=N&pace=NS&batch=B", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f := w.(http.Flusher)
	f.Flush()
	var tick <-chan time.Time
	if pace > 0 {
		t := time.NewTicker(time.Duration(pace))
		defer t.Stop()
		tick = t.C
	}
	buf := make([]byte, 0, batch*128)
	for i := 0; i < n; {
		if tick != nil {
			<-tick
		}
		buf = buf[:0]
		sent := time.Since(u.base)
		for j := 0; j < batch && i < n; j, i = j+1, i+1 {
			buf = scale.AppendEvent(buf, i)
			// The send time goes in a comment line of the same block.
			buf = buf[:len(buf)-1]
			buf = append(buf, ": t="...)
			buf = strconv.AppendInt(buf, int64(sent), 10)
			buf = append(buf, "\n\n"...)
		}
		if _, err := w.Write(buf); err != nil {
			return
		}
		f.Flush()
	}
}

// apartRead reads n events from s's stream (paced every pace, batch per
// write), checking that they arrive whole and in order; with lat non-nil
// it appends each event's one-way latency to it.
func apartRead(ctx context.Context, s *apartSetup, up *apartUpstream, n int, pace time.Duration, batch int, lat []time.Duration) ([]time.Duration, error) {
	url := fmt.Sprintf("%s/stream?n=%d&pace=%d&batch=%d", s.url, n, pace, batch)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return lat, err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := s.client.Do(req)
	if err != nil {
		return lat, err
	}
	defer func() {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}()
	if resp.StatusCode != http.StatusOK {
		return lat, fmt.Errorf("%s: %s", s.name, resp.Status)
	}
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	want := 0
	for want < n {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return lat, fmt.Errorf("%s: after %d of %d events: %w", s.name, want, n, err)
		}
		switch {
		case bytes.HasPrefix(line, []byte("id: ")):
			id, err := strconv.Atoi(string(bytes.TrimSpace(line[4:])))
			if err != nil || id != want {
				return lat, fmt.Errorf("%s: event id %q, want %d", s.name, bytes.TrimSpace(line), want)
			}
		case bytes.HasPrefix(line, []byte(": t=")):
			if lat != nil {
				sent, err := strconv.ParseInt(string(bytes.TrimSpace(line[4:])), 10, 64)
				if err != nil {
					return lat, fmt.Errorf("%s: send time %q: %w", s.name, line, err)
				}
				lat = append(lat, time.Since(up.base)-time.Duration(sent))
			}
			want++
		}
	}
	return lat, nil
}

// TestApartHarness runs BenchmarkApart's harness with a few events: each
// setup carries a paced and a bulk stream whole and in order, a paced
// event's latency is never negative, and the proxy children are the ones
// that carried the streams (their CPU time grew).
func TestApartHarness(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	up := newApartUpstream()
	defer up.Close()
	setups := []*apartSetup{{name: direct, url: up.URL}}
	for _, mode := range []string{reverseProxy, fray} {
		c, err := scale.StartChild(ctx, scale.ChildConfig{Mode: mode, Listen: "127.0.0.1:0", Upstream: up.URL})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		setups = append(setups, &apartSetup{name: mode, url: "http://" + c.Addr, child: c})
	}
	for _, s := range setups {
		t.Run(s.name, func(t *testing.T) {
			s.client = &http.Client{Transport: &http.Transport{}}
			defer s.client.CloseIdleConnections()
			cpu0, err := childCPU(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			lat, err := apartRead(ctx, s, up, 20, time.Millisecond, 1, []time.Duration{})
			if err != nil {
				t.Fatal(err)
			}
			if len(lat) != 20 {
				t.Fatalf("%d latencies for 20 paced events", len(lat))
			}
			for i, l := range lat {
				if l < 0 {
					t.Errorf("event %d: latency %v", i, l)
				}
			}
			if _, err := apartRead(ctx, s, up, 2*apartBulk+7, 0, apartBulk, nil); err != nil {
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
