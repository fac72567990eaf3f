// Package benchsse is the SSE stream fray's stream benchmarks send through
// each setup: an upstream that writes numbered progress notifications,
// paced or in bulk, each carrying its send time, and a client that reads
// them back, checks that they all came in order and measures how long
// each took.
//
//	Upstream (Path?n=N&pace=NS&batch=B) -> the setup -> Read
//
// The send time is on the monotonic clock, as nanoseconds since the
// Upstream's Base: the client must run in the same process as the
// Upstream. Both are used by BenchmarkStream (proxy/forward), where the
// proxy shares that process, and by the perf command (proxy/internal/perf),
// where each proxy is a process of its own. HostSteal tells both how
// contended the machine was while they measured.
package benchsse

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
	"time"
)

// Path is where the Upstream serves its stream.
const Path = "/mcp"

// Upstream is an SSE server whose events carry their sequence number and
// send time: `{"jsonrpc":"2.0","method":"notifications/progress",
// "params":{"progressToken":1,"seq":S,"t":T}}` with id S, T in nanoseconds
// since Base on the monotonic clock. Its methods are safe for concurrent
// use; the zero value is not usable: use NewUpstream.
type Upstream struct {
	*httptest.Server
	// Base is the time send times count from.
	Base time.Time
}

// NewUpstream starts an Upstream on a loopback address; Close stops it.
func NewUpstream() *Upstream { return NewUpstreamBeside(nil) }

// NewUpstreamBeside starts an Upstream that serves other, when not nil,
// on every path but Path: another server behind the same proxies.
func NewUpstreamBeside(other http.Handler) *Upstream {
	u := &Upstream{Base: time.Now()}
	var h http.Handler = http.HandlerFunc(u.serve)
	if other != nil {
		mux := http.NewServeMux()
		mux.Handle(Path, h)
		mux.Handle("/", other)
		h = mux
	}
	u.Server = httptest.NewServer(h)
	return u
}

// URL asks base's stream (the Upstream's own URL, or a proxy's in front
// of it) for n events, paced every pace or as fast as they go with pace
// 0, batch of them per write.
func URL(base string, n int, pace time.Duration, batch int) string {
	return fmt.Sprintf("%s%s?n=%d&pace=%d&batch=%d", base, Path, n, pace, batch)
}

// serve streams ?n= events, paced every ?pace= nanoseconds when given,
// ?batch= of them per write and flush.
func (u *Upstream) serve(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	n, err1 := strconv.Atoi(q.Get("n"))
	pace, err2 := strconv.ParseInt(q.Get("pace"), 10, 64)
	batch, err3 := strconv.Atoi(q.Get("batch"))
	if r.URL.Path != Path || err1 != nil || err2 != nil || err3 != nil || batch < 1 {
		http.Error(w, "want "+Path+"?n=N&pace=NS&batch=B", http.StatusBadRequest)
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
		sent := time.Since(u.Base)
		for j := 0; j < batch && i < n; j, i = j+1, i+1 {
			buf = AppendEvent(buf, i, sent)
		}
		if _, err := w.Write(buf); err != nil {
			return
		}
		f.Flush()
	}
}

// AppendEvent appends event seq, sent at sent, as the Upstream writes it:
// about 95 bytes.
func AppendEvent(b []byte, seq int, sent time.Duration) []byte {
	b = append(b, "id: "...)
	b = strconv.AppendInt(b, int64(seq), 10)
	b = append(b, "\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"seq\":"...)
	b = strconv.AppendInt(b, int64(seq), 10)
	b = append(b, `,"t":`...)
	b = strconv.AppendInt(b, int64(sent), 10)
	return append(b, "}}\n\n"...)
}

// Read reads the stream at target, which must hold n events, checking
// that they arrive complete and in order. With lat, it records each
// event's one-way latency, measured from base, in lat[i] (lat has room
// for n).
func Read(ctx context.Context, client *http.Client, target string, n int, base time.Time, lat []time.Duration) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
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
		seq, sent, ok := parseEvent(data)
		if !ok || seq != got || got >= n {
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

// parseEvent reads seq and t from an event's data without allocating.
func parseEvent(data []byte) (seq int, sent time.Duration, ok bool) {
	_, rest, ok1 := bytes.Cut(data, []byte(`"seq":`))
	s, rest, ok2 := digits(rest)
	_, rest, ok3 := bytes.Cut(rest, []byte(`"t":`))
	t, _, ok4 := digits(rest)
	return int(s), time.Duration(t), ok1 && ok2 && ok3 && ok4
}

func digits(b []byte) (n int64, rest []byte, ok bool) {
	i := 0
	for ; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
		n = n*10 + int64(b[i]-'0')
	}
	return n, b[i:], i > 0
}

// Quantile returns the q-quantile of sorted latencies (nearest rank).
func Quantile(sorted []time.Duration, q float64) time.Duration {
	return sorted[int(q*float64(len(sorted)-1)+0.5)]
}

// Micros is d in microseconds, as the benchmarks report latencies.
func Micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// StealPercent is steal, the growth of HostSteal over elapsed, as a share
// of the machine's CPU time then: 100 when the host ran other work on
// every CPU for all of it.
func StealPercent(steal, elapsed time.Duration) float64 {
	return 100 * steal.Seconds() / (elapsed.Seconds() * float64(runtime.NumCPU()))
}
