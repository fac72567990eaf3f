package forward_test

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/frayproxy/fray/proxy/forward"
	"github.com/frayproxy/fray/proxy/metrics"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/trace"
	"github.com/frayproxy/fray/proxy/verify"
)

// memTransport answers every request with an in-memory event stream.
type memTransport struct{ body []byte }

func (m memTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return streamResponse(r, bytes.NewReader(m.body)), nil
}

// streamResponse is the 200 event stream answer to r, with body.
func streamResponse(r *http.Request, body io.Reader) *http.Response {
	return &http.Response{
		StatusCode: 200, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"text/event-stream"}},
		Body:    io.NopCloser(body),
		Request: r, ContentLength: -1,
	}
}

// progressEvents returns n progress notifications as an event stream.
func progressEvents(n int) *bytes.Buffer {
	var body bytes.Buffer
	for i := range n {
		body.WriteString("id: " + strings.Repeat("7", 1+i%5) + "\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\n")
	}
	return &body
}

// discardWriter is a flushable ResponseWriter that keeps nothing.
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardWriter) WriteHeader(int)             {}
func (d *discardWriter) Flush()                      {}

// TestNoAllocationPerEvent: a whole exchange of 1000 events through the
// pump, with and without a profile whose faults never fire, allocates a
// small constant (the exchange's own bookkeeping), not something per event;
// reporting each event to an observer allocates nothing either.
func TestNoAllocationPerEvent(t *testing.T) {
	const events = 1000
	body := progressEvents(events)
	active := activeProfile(t, "unmatched.toml", `
[[fault]]
kind = "drop"
stream = "post"
rpc_method = "never/called"
[[fault]]
kind = "delay"
delay = "1s"
rpc_kind = "error"
`)
	for name, opts := range map[string]forward.Options{
		"no-profile": {Transport: memTransport{body.Bytes()}},
		"unmatched":  {Transport: memTransport{body.Bytes()}, Faults: active, LogFaults: true},
		"observed": {Transport: memTransport{body.Bytes()}, Faults: active,
			Observer: observe.Func(func(o *observe.Observation) {})},
	} {
		t.Run(name, func(t *testing.T) {
			p := newProxy(t, "http://upstream.invalid", opts)
			req, _ := http.NewRequest("POST", "http://fray/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`))
			w := &discardWriter{h: http.Header{}}
			allocs := testing.AllocsPerRun(20, func() {
				req.Body = io.NopCloser(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`))
				clear(w.h)
				p.ServeHTTP(w, req)
			})
			if allocs > events/10 {
				t.Fatalf("%.0f allocations for an exchange of %d events: the per-event path allocates", allocs, events)
			}
			t.Logf("%.0f allocations per exchange of %d events", allocs, events)
		})
	}
}

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
	return streamResponse(r, body), nil
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

// writeRecorder is a flushable ResponseWriter that keeps what it is
// written and the size of each write.
type writeRecorder struct {
	h      http.Header
	body   bytes.Buffer
	writes []int
}

func (w *writeRecorder) Header() http.Header { return w.h }
func (w *writeRecorder) Write(b []byte) (int, error) {
	w.writes = append(w.writes, len(b))
	return w.body.Write(b)
}
func (w *writeRecorder) WriteHeader(int) {}
func (w *writeRecorder) Flush()          {}

// TestBulkStreamWritesAsItReads: an upstream that always has more bytes
// than a read takes (a stream in bulk) is read in the reader's largest
// pieces, and the events of each read leave in one write to the client,
// not one per 32 KiB: about one write per 128 KiB. The client gets the
// stream byte for byte, and the observer every event.
func TestBulkStreamWritesAsItReads(t *testing.T) {
	const events = 5000
	body := progressEvents(events)
	seen := 0
	p := newProxy(t, "http://upstream.invalid", forward.Options{Transport: memTransport{body.Bytes()},
		Observer: observe.Func(func(o *observe.Observation) {
			if o.Kind == observe.KindEvent {
				seen++
			}
		})})
	req, _ := http.NewRequest("POST", "http://fray/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`))
	w := &writeRecorder{h: http.Header{}}
	p.ServeHTTP(w, req)
	if !bytes.Equal(w.body.Bytes(), body.Bytes()) {
		t.Fatalf("the client got %d bytes, not the upstream's %d", w.body.Len(), body.Len())
	}
	if seen != events {
		t.Errorf("the observer saw %d events, want %d", seen, events)
	}
	// The reads widen from 4 KiB through 32 KiB to 128 KiB; from there on,
	// one write per read.
	most := body.Len()/(120<<10) + 4
	if len(w.writes) > most {
		t.Errorf("%d writes for %d bytes (sizes %v), want at most %d: one per read of up to 128 KiB", len(w.writes), body.Len(), w.writes, most)
	}
	if largest := slices.Max(w.writes); largest <= 32<<10 {
		t.Errorf("largest write %d bytes, want more than 32 KiB", largest)
	}
}
