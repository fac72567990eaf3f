package forward_test

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/frayproxy/fray/proxy/forward"
	"github.com/frayproxy/fray/proxy/metrics"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/trace"
	"github.com/frayproxy/fray/proxy/verify"
)

// numberedStream is a memTransport-like upstream whose events carry ids
// that never repeat across exchanges, as a real server's do: the verifier
// records each one.
type numberedStream struct {
	n    int // events per exchange
	next int
	buf  []byte
	rd   bytes.Reader
	// paced: each read delivers one event, as from a paced upstream, so
	// that every read is a chunk (forward.Options.Observer, whose streams take chunks).
	paced bool
	one   oneEventReads
}

// oneEventReads reads r one event at a time.
type oneEventReads struct{ r *bytes.Reader }

func (o *oneEventReads) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c, err := o.r.ReadByte()
		if err != nil {
			if n > 0 {
				return n, nil
			}
			return 0, io.EOF
		}
		p[n] = c
		n++
		if n >= 2 && p[n-1] == '\n' && p[n-2] == '\n' {
			break
		}
	}
	return n, nil
}

func (s *numberedStream) RoundTrip(r *http.Request) (*http.Response, error) {
	// Built without allocating (once the buffer is grown): only the
	// proxy's allocations are counted.
	s.buf = s.buf[:0]
	for range s.n {
		s.next++
		s.buf = strconv.AppendInt(append(s.buf, "id: ev-"...), int64(s.next), 10)
		s.buf = append(s.buf, "\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":"...)
		s.buf = strconv.AppendInt(s.buf, int64(s.next), 10)
		s.buf = append(s.buf, "}}\n\n"...)
	}
	s.rd.Reset(s.buf)
	var body io.Reader = &s.rd
	if s.paced {
		s.one.r = &s.rd
		body = &s.one
	}
	return &http.Response{
		StatusCode: 200, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"text/event-stream"}},
		Body:    io.NopCloser(body),
		Request: r, ContentLength: -1,
	}, nil
}

// TestNoAllocationPerEventObserved: with the observers fray proxy runs
// (the verifier and the metrics, behind the queue that passes them the
// events; and the trace writer, with --trace) and faults that fire (drop, delay,
// set-retry, rewrite-id), an exchange of 2N events allocates what one of
// N events does: nothing per event, once the verifier's id windows are
// full (steady state).
func TestNoAllocationPerEventObserved(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations are not counted under the race detector")
	}
	for _, tt := range []struct {
		name, profile string
		paced, traced bool
	}{
		{"no faults", "", false, false},
		{"no faults, an event a read", "", true, false},
		{"traced", "", false, true},
		{"firing faults", `
[[fault]]
kind = "drop"
probability = 0.1
[[fault]]
kind = "delay"
delay = "1us"
probability = 0.02
[[fault]]
kind = "set-retry"
retry = "2s"
[[fault]]
kind = "rewrite-id"
id = "{id}-x"
`, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			const n = 1000
			up := &numberedStream{paced: tt.paced}
			v := verify.New(verify.Options{})
			m := metrics.New(metrics.Options{NoRuntime: true})
			observers := []observe.Observer{v, m}
			if tt.traced {
				tw, err := trace.NewWriter(io.Discard, trace.WriterOptions{})
				if err != nil {
					t.Fatal(err)
				}
				defer tw.Close()
				observers = append(observers, tw)
			}
			// As the engine passes them on: events through a queue.
			q := observe.NewQueue(observe.Tee(observers...))
			defer q.Close()
			c := &chunkCounter{Queue: q}
			opts := forward.Options{Transport: up, Observer: c}
			if tt.profile != "" {
				opts.Faults = activeProfile(t, "firing.toml", tt.profile)
			}
			p := newProxy(t, "http://upstream.invalid", opts)
			w := &discardWriter{h: http.Header{}}
			exchange := func() {
				req, _ := http.NewRequest("POST", "http://fray/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":1}}}`))
				req.Header.Set("Accept", "application/json, text/event-stream")
				clear(w.h)
				p.ServeHTTP(w, req)
			}
			// Fill the verifier's windows (4096 ids a session) first.
			up.n = n
			for range 10 {
				exchange()
			}
			allocs := func(events int) float64 {
				up.n = events
				return testing.AllocsPerRun(10, exchange)
			}
			one, two := allocs(n), allocs(2*n)
			t.Logf("%.0f allocations for an exchange of %d events, %.0f for %d", one, n, two, 2*n)
			if perEvent := (two - one) / n; perEvent > 0.01 {
				t.Errorf("%.3f allocations per event (%.0f for %d events, %.0f for %d)", perEvent, one, n, two, 2*n)
			}
			q.Drain()
			if tt.paced && c.chunks.Load() < n {
				t.Errorf("%d reads of one event each went to the queue as chunks; the test is of that way", c.chunks.Load())
			}
			if v.Progress().Events < 20*n {
				t.Errorf("the verifier saw %d events", v.Progress().Events)
			}
		})
	}
}
