package forward_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/frayproxy/fray/proxy/forward"
	"github.com/frayproxy/fray/proxy/observe"
)

// memTransport answers every request with an in-memory event stream.
type memTransport struct{ body []byte }

func (m memTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{
		StatusCode: 200, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"text/event-stream"}},
		Body:    io.NopCloser(bytes.NewReader(m.body)),
		Request: r, ContentLength: -1,
	}, nil
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
