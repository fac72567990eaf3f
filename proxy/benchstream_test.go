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
	"runtime"
	"strconv"
	"testing"
	"time"
)

// benchUpstream is an SSE server whose events carry their sequence number
// and send time: `{"jsonrpc":"2.0","method":"notifications/progress",
// "params":{"progressToken":1,"seq":S,"t":T}}` with id S, T in nanoseconds
// since base on the monotonic clock, which the client shares because it
// runs in the same process.
type benchUpstream struct {
	*httptest.Server
	base time.Time
}

func newBenchUpstream() *benchUpstream {
	u := &benchUpstream{base: time.Now()}
	u.Server = httptest.NewServer(http.HandlerFunc(u.serve))
	return u
}

// benchStreamURL asks base's stream for n events, paced every pace or as
// fast as they go, batch of them per write.
func benchStreamURL(base string, n int, pace time.Duration, batch int) string {
	return fmt.Sprintf("%s%s?n=%d&pace=%d&batch=%d", base, benchPath, n, pace, batch)
}

// serve streams ?n= events, paced every ?pace= nanoseconds when given,
// ?batch= of them per write and flush.
func (u *benchUpstream) serve(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	n, err1 := strconv.Atoi(q.Get("n"))
	pace, err2 := strconv.ParseInt(q.Get("pace"), 10, 64)
	batch, err3 := strconv.Atoi(q.Get("batch"))
	if r.URL.Path != benchPath || err1 != nil || err2 != nil || err3 != nil || batch < 1 {
		http.Error(w, "want "+benchPath+"?n=N&pace=NS&batch=B", http.StatusBadRequest)
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
	buf := make([]byte, 0, batch*128)
	for i := 0; i < n; {
		if tick != nil {
			<-tick
		}
		buf = buf[:0]
		sent := time.Since(u.base)
		for j := 0; j < batch && i < n; j, i = j+1, i+1 {
			buf = appendBenchEvent(buf, i, sent)
		}
		if _, err := w.Write(buf); err != nil {
			return
		}
		f.Flush()
	}
}

func appendBenchEvent(b []byte, seq int, sent time.Duration) []byte {
	b = append(b, "id: "...)
	b = strconv.AppendInt(b, int64(seq), 10)
	b = append(b, "\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"seq\":"...)
	b = strconv.AppendInt(b, int64(seq), 10)
	b = append(b, `,"t":`...)
	b = strconv.AppendInt(b, int64(sent), 10)
	return append(b, "}}\n\n"...)
}

// benchRead reads the stream at target, which must hold n events,
// checking that they arrive complete and in order. With lat, it records
// each event's one-way latency (lat has room for n).
func benchRead(client *http.Client, target string, n int, base time.Time, lat []time.Duration) error {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, target, nil)
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
// each setup, in both regimes: every event arrives once and in order,
// latencies are measured, the process's CPU time is read, and nothing is
// left running.
func TestBenchStreamHarness(t *testing.T) {
	before := runtime.NumGoroutine()
	setups, up, done := newBenchSetups(t, t.TempDir())
	client := &http.Client{Transport: newBenchTransport()}
	var names []string
	for _, s := range setups {
		names = append(names, s.name)
		for _, batch := range []int{1, 7, benchBulk} {
			n := 2*batch + 3 // a short last write
			if err := benchRead(client, benchStreamURL(s.url, n, 0, batch), n, up.base, nil); err != nil {
				t.Error(err)
			}
		}
		lat := make([]time.Duration, 20)
		if err := benchRead(client, benchStreamURL(s.url, len(lat), 50*time.Microsecond, 1), len(lat), up.base, lat); err != nil {
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
	if err := benchRead(client, up.URL+"/other?n=1&pace=0&batch=1", 1, up.base, nil); err == nil {
		t.Error("a wrong path was answered 200")
	}
	if err := benchRead(client, benchStreamURL(up.URL, 3, 0, 1), 4, up.base, nil); err == nil {
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
	}

	client.CloseIdleConnections()
	done()
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
