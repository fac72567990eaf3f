package proxy_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/frayproxy/fray/engine"
	"github.com/frayproxy/fray/proxy"
)

// BenchmarkStream measures one SSE stream of b.N events in three setups,
//
//	direct:        client <-> upstream
//	reverseproxy:  client <-> httputil.ReverseProxy (FlushInterval -1) <-> upstream
//	fray:          client <-> proxy.Proxy <-> upstream
//	fray-shipped:  client <-> the engine fray proxy runs (verifier and
//	               metrics attached) <-> upstream
//
// over HTTP/1.1 keep-alive connections on 127.0.0.1. Each sub-benchmark
// runs two phases on the same connections:
//
//   - throughput (timed): the upstream writes and flushes b.N events as fast
//     as the client takes them; reported as events/s (ns/op and allocs/op
//     are per event and count the whole process: upstream, proxy, client);
//   - latency (untimed): the upstream paces min(b.N, benchMaxPaced) events
//     with a ticker, each carrying its send time, and the client reports the
//     one-way p50-µs and p99-µs. Direct's figures are the base; a proxy's
//     added latency is its figure minus direct's.
//
// The ratios the acceptance asks for are computed from the output by
//
//	go test -run XXX -bench BenchmarkStream -benchtime 20000x ./proxy/ | go run ./proxy/internal/benchcmp
func BenchmarkStream(b *testing.B) {
	up := newBenchUpstream()
	defer up.Close()
	upURL, err := url.Parse(up.URL)
	if err != nil {
		b.Fatal(err)
	}

	rpTransport := newBenchTransport()
	defer rpTransport.CloseIdleConnections()
	rp := httputil.NewSingleHostReverseProxy(upURL)
	rp.FlushInterval = -1
	rp.Transport = rpTransport
	rpSrv := httptest.NewServer(rp)
	defer rpSrv.Close()

	// fray gets a transport configured like the reverse proxy's, so the
	// comparison is of the proxies and not of their connection pools.
	frayTransport := newBenchTransport()
	defer frayTransport.CloseIdleConnections()
	p, err := proxy.New(proxy.Options{Upstream: upURL, Transport: frayTransport})
	if err != nil {
		b.Fatal(err)
	}
	fraySrv := httptest.NewServer(p)
	defer fraySrv.Close()

	// What `fray proxy` runs: the same proxy with the verifier and the
	// metrics observing every event.
	shippedTransport := newBenchTransport()
	defer shippedTransport.CloseIdleConnections()
	eng, err := engine.New(engine.Options{Upstream: upURL, Transport: shippedTransport, Metrics: true})
	if err != nil {
		b.Fatal(err)
	}
	shippedSrv := httptest.NewServer(eng.Handler())
	defer shippedSrv.Close()

	for _, mode := range []struct{ name, url string }{
		{"direct", up.URL},
		{"reverseproxy", rpSrv.URL},
		{"fray", fraySrv.URL},
		{"fray-shipped", shippedSrv.URL},
	} {
		b.Run(mode.name, func(b *testing.B) {
			client := &http.Client{Transport: newBenchTransport()}
			defer client.CloseIdleConnections()
			benchStream(b, client, mode.url+benchPath, up.base)
		})
	}
}

const (
	// benchPath is where the upstream serves its stream.
	benchPath = "/mcp"
	// benchPace is the gap between events in the latency phase (at least:
	// timers may be coarser): wide
	// enough that an event never queues behind the one before it.
	benchPace = 200 * time.Microsecond
	// benchMaxPaced bounds the latency phase, which takes benchPace per
	// event whatever b.N the throughput phase asks for.
	benchMaxPaced = 5000
)

// benchStream runs both phases through one setup and reports the metrics.
func benchStream(b *testing.B, client *http.Client, target string, base time.Time) {
	// Open the connections (client's and proxy's) before the clock starts.
	if err := benchRead(client, target, 1, 0, base, nil); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	err := benchRead(client, target, b.N, 0, base, nil)
	elapsed := time.Since(start)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}

	lat := make([]time.Duration, min(b.N, benchMaxPaced))
	if err := benchRead(client, target, len(lat), benchPace, base, lat); err != nil {
		b.Fatal(err)
	}
	slices.Sort(lat)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
	b.ReportMetric(benchMicros(benchQuantile(lat, 0.50)), "p50-µs")
	b.ReportMetric(benchMicros(benchQuantile(lat, 0.99)), "p99-µs")
}

// benchQuantile returns the q-quantile of sorted (nearest rank).
func benchQuantile(sorted []time.Duration, q float64) time.Duration {
	return sorted[int(q*float64(len(sorted)-1)+0.5)]
}

func benchMicros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func newBenchTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ForceAttemptHTTP2 = false
	t.MaxIdleConnsPerHost = 4
	return t
}

// benchUpstream is an SSE server whose events carry their sequence number
// and send time: `{"jsonrpc":"2.0","method":"notifications/message",
// "params":{"seq":S,"t":T}}`, T in nanoseconds since base on the monotonic
// clock, which the client shares because it runs in the same process.
type benchUpstream struct {
	*httptest.Server
	base time.Time
}

func newBenchUpstream() *benchUpstream {
	u := &benchUpstream{base: time.Now()}
	u.Server = httptest.NewServer(http.HandlerFunc(u.serve))
	return u
}

// serve streams ?n= events, paced every ?pace= nanoseconds when given.
func (u *benchUpstream) serve(w http.ResponseWriter, r *http.Request) {
	n, err1 := strconv.Atoi(r.URL.Query().Get("n"))
	pace, err2 := strconv.ParseInt(r.URL.Query().Get("pace"), 10, 64)
	if r.URL.Path != benchPath || err1 != nil || err2 != nil {
		http.Error(w, "want "+benchPath+"?n=N&pace=NS", http.StatusBadRequest)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f := w.(http.Flusher)
	f.Flush()

	var tick <-chan time.Time
	if pace > 0 {
		t := time.NewTicker(time.Duration(pace))
		defer t.Stop()
		tick = t.C
	}
	buf := make([]byte, 0, 256)
	for i := range n {
		if tick != nil {
			select {
			case <-tick:
			case <-r.Context().Done():
				return
			}
		}
		buf = appendBenchEvent(buf[:0], i, time.Since(u.base))
		if _, err := w.Write(buf); err != nil {
			return
		}
		f.Flush()
	}
}

func appendBenchEvent(b []byte, seq int, sent time.Duration) []byte {
	b = append(b, "id: "...)
	b = strconv.AppendInt(b, int64(seq), 10)
	b = append(b, "\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"seq\":"...)
	b = strconv.AppendInt(b, int64(seq), 10)
	b = append(b, `,"t":`...)
	b = strconv.AppendInt(b, int64(sent), 10)
	return append(b, "}}\n\n"...)
}

// benchRead asks target for n events and reads them all, checking that
// they arrive complete and in order. With lat, it records each event's
// one-way latency (lat has room for n).
func benchRead(client *http.Client, target string, n int, pace time.Duration, base time.Time, lat []time.Duration) error {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet,
		fmt.Sprintf("%s?n=%d&pace=%d", target, n, pace), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	// Drain before closing so that the connection is reused.
	defer func() {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: status %s", target, resp.Status)
	}
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	got := 0
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, io.EOF) && len(line) == 0 {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: after %d events: %w", target, got, err)
		}
		data, ok := bytes.CutPrefix(line, []byte("data: "))
		if !ok {
			continue
		}
		seq, sent, ok := parseBenchEvent(data)
		if !ok || seq != got {
			return fmt.Errorf("%s: event %d: unexpected data %q", target, got, data)
		}
		if lat != nil {
			lat[got] = time.Since(base) - sent
		}
		got++
	}
	if got != n {
		return fmt.Errorf("%s: %d events, want %d", target, got, n)
	}
	return nil
}

// parseBenchEvent reads seq and t from an event's data without allocating.
func parseBenchEvent(data []byte) (seq int, sent time.Duration, ok bool) {
	_, rest, ok1 := bytes.Cut(data, []byte(`"seq":`))
	s, rest, ok2 := benchDigits(rest)
	_, rest, ok3 := bytes.Cut(rest, []byte(`"t":`))
	t, _, ok4 := benchDigits(rest)
	return int(s), time.Duration(t), ok1 && ok2 && ok3 && ok4
}

func benchDigits(b []byte) (n int64, rest []byte, ok bool) {
	i := 0
	for ; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
		n = n*10 + int64(b[i]-'0')
	}
	return n, b[i:], i > 0
}

// TestBenchStreamHarness runs BenchmarkStream's harness briefly through
// each setup: every event arrives once and in order, latencies are
// measured, and nothing is left running.
func TestBenchStreamHarness(t *testing.T) {
	before := runtime.NumGoroutine()
	up := newBenchUpstream()
	upURL, _ := url.Parse(up.URL)
	tr := newBenchTransport()
	rp := httputil.NewSingleHostReverseProxy(upURL)
	rp.FlushInterval = -1
	rp.Transport = tr
	rpSrv := httptest.NewServer(rp)
	p, err := proxy.New(proxy.Options{Upstream: upURL, Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	fraySrv := httptest.NewServer(p)
	client := &http.Client{Transport: newBenchTransport()}

	for _, target := range []string{up.URL, rpSrv.URL, fraySrv.URL} {
		if err := benchRead(client, target+benchPath, 500, 0, up.base, nil); err != nil {
			t.Error(err)
		}
		lat := make([]time.Duration, 20)
		if err := benchRead(client, target+benchPath, len(lat), 50*time.Microsecond, up.base, lat); err != nil {
			t.Error(err)
		}
		for i, d := range lat {
			if d <= 0 || d > time.Minute {
				t.Errorf("%s: event %d: latency %v", target, i, d)
			}
		}
	}
	if err := benchRead(client, up.URL+"/other", 1, 0, up.base, nil); err == nil {
		t.Error("a wrong path was answered 200")
	}

	client.CloseIdleConnections()
	fraySrv.Close()
	rpSrv.Close()
	tr.CloseIdleConnections()
	up.Close()
	// Closed connections end their goroutines asynchronously; give them a
	// bounded time to go.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines before, %d after:\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}
}
