package metrics_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy/forward"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/metrics"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
)

// jumpClock is a forward.Clock whose time moves only when told, and whose
// timers fire at once, moving the time forward by their duration: a delay
// fault then adds exactly its delay to an event, without waiting.
type jumpClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *jumpClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *jumpClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func (c *jumpClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.Advance(d)
	go f()
	return func() bool { return false }
}

// scriptedUpstream answers the script of TestScrapeAfterTraffic: a JSON
// initialize that assigns a session, one SSE answer delivered whole, one
// cut after its priming event and replayed on resumption, a standalone GET
// stream held open until release is closed, then 405 for the next GET.
type scriptedUpstream struct {
	release chan struct{}
	gets    int
	mu      sync.Mutex
}

const session = "session-1"

func (u *scriptedUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	sse := func() {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
	}
	switch {
	case r.Method == http.MethodPost && strings.Contains(string(body), `"initialize"`):
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Mcp-Session-Id", session)
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`)
	case r.Method == http.MethodPost && strings.Contains(string(body), `"id":2`):
		sse()
		fmt.Fprint(w, "id: 1\ndata:\n\n",
			"id: 2\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\n",
			"id: 3\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":2}}\n\n",
			"id: 4\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n")
	case r.Method == http.MethodPost:
		// SEP-1699 polling: the priming event, then the server hangs up.
		sse()
		fmt.Fprint(w, "id: 5\ndata:\n\n")
	case r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") == "5":
		sse()
		fmt.Fprint(w, "id: 6\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n\n")
	case r.Method == http.MethodGet:
		u.mu.Lock()
		u.gets++
		first := u.gets == 1
		u.mu.Unlock()
		if !first {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		sse()
		fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n",
			"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-u.release:
		case <-r.Context().Done():
		}
	case r.Method == http.MethodDelete:
		w.WriteHeader(http.StatusOK)
	}
}

const testProfile = `
name = "metrics-test"
[[fault]]
kind = "delay"
stream = "post"
rpc_kind = "notification"
delay = "250ms"

[[fault]]
kind = "drop"
stream = "get"
nth = 1
`

// TestScrapeAfterTraffic runs a scripted exchange through a real proxy on
// loopback, scrapes /metrics over HTTP, parses the text format and checks
// each series against what was sent.
func TestScrapeAfterTraffic(t *testing.T) {
	up := &scriptedUpstream{release: make(chan struct{})}
	upSrv := httptest.NewServer(up)
	defer upSrv.Close()
	upURL, _ := url.Parse(upSrv.URL)

	prof, err := profiles.Parse("metrics-test", strings.NewReader(testProfile))
	if err != nil {
		t.Fatal(err)
	}
	active, err := profiles.NewActive(prof, nil)
	if err != nil {
		t.Fatal(err)
	}
	checks := []report.Check{{ID: "client.retry-honoured", Count: 2}, {ID: "server.priming-event", Count: 0}}
	m := metrics.New(metrics.Options{Findings: func() []report.Check { return checks }})
	clock := &jumpClock{now: time.Unix(1_000_000, 0)}
	p, err := forward.New(forward.Options{Upstream: upURL, Faults: active, Observer: m, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	fray := httptest.NewServer(p)
	defer fray.Close()
	scrape := httptest.NewServer(m.Handler())
	defer scrape.Close()

	c := &client{t: t, base: fray.URL + "/mcp"}
	c.do(http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"initialize"}`, "")
	if got := c.do(http.MethodPost, `{"jsonrpc":"2.0","id":2,"method":"tools/call"}`, ""); got != 4 {
		t.Fatalf("answered POST stream: %d events, want 4", got)
	}
	if got := c.do(http.MethodPost, `{"jsonrpc":"2.0","id":3,"method":"tools/call"}`, ""); got != 1 {
		t.Fatalf("cut POST stream: %d events, want 1", got)
	}
	clock.Advance(1500 * time.Millisecond) // the client's reconnection delay
	if got := c.do(http.MethodGet, "", "5"); got != 1 {
		t.Fatalf("resumption: %d events, want 1", got)
	}

	// The standalone stream stays open while it is scraped.
	events, done := c.open()
	if n := <-events; n != 1 {
		t.Fatalf("standalone stream: event %d first, want 1", n)
	}
	open := gather(t, scrape.URL)
	if got := gauge(t, open, "fray_open_streams"); got != 1 {
		t.Errorf("fray_open_streams while a stream is open = %v, want 1", got)
	}
	close(up.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	clock.Advance(250 * time.Millisecond)
	c.do(http.MethodGet, "", "")
	c.do(http.MethodDelete, "", "")

	fams := gather(t, scrape.URL)
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"fray_exchanges_total", map[string]string{"stream": "post"}, 3},
		{"fray_exchanges_total", map[string]string{"stream": "resume"}, 1},
		{"fray_exchanges_total", map[string]string{"stream": "get"}, 2},
		{"fray_exchanges_total", map[string]string{"stream": "other"}, 1},
		{"fray_exchanges_total", map[string]string{"stream": "legacy"}, 0},
		// 4 + 1 + 1 + 2 read; the drop fault kept one from the client.
		{"fray_events_total", map[string]string{"direction": "from_upstream"}, 8},
		{"fray_events_total", map[string]string{"direction": "to_client"}, 7},
		{"fray_faults_total", map[string]string{"kind": "delay"}, 2},
		{"fray_faults_total", map[string]string{"kind": "drop"}, 1},
		{"fray_faults_total", map[string]string{"kind": "reset"}, 0},
		{"fray_resumptions_total", nil, 1},
		{"fray_findings_total", map[string]string{"check": "client.retry-honoured"}, 2},
		{"fray_findings_total", map[string]string{"check": "server.priming-event"}, 0},
	} {
		if got := value(t, fams, tc.name, tc.labels); got != tc.want {
			t.Errorf("%s%v = %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}
	if got := gauge(t, fams, "fray_open_streams"); got != 0 {
		t.Errorf("fray_open_streams at the end = %v, want 0", got)
	}
	// The cut POST stream waited 1.5 s for its resumption, the standalone
	// stream 0.25 s for the next GET.
	checkHistogram(t, fams, "fray_reconnect_delay_seconds", 2, 1.75, map[float64]uint64{0.25: 1, 1: 1, 2.5: 2})
	// Seven events delivered. The two delayed notifications came in one
	// read: the first left 250 ms after it came, the second, held behind
	// it and then delayed itself, 500 ms after; the others gained nothing
	// on this clock.
	checkHistogram(t, fams, "fray_added_latency_seconds", 7, 0.75, map[float64]uint64{1e-5: 5, 0.1: 5, 0.25: 6, 0.5: 7})
	// It measures what fray held the events, as its help and docs/cli.md
	// say: the five passed on at once count 0, fray's own cost nothing.
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	const measures = "0 for an event passed on at once"
	var row string
	for l := range strings.Lines(string(doc)) {
		if strings.HasPrefix(l, "| `fray_added_latency_seconds` |") {
			row = l
		}
	}
	if help := fams["fray_added_latency_seconds"].GetHelp(); !strings.Contains(help, measures) || !strings.Contains(row, measures) {
		t.Errorf("the help %q and docs/cli.md's row %q do not say that the metric counts %q", help, row, measures)
	}
	if _, ok := fams["go_goroutines"]; !ok {
		t.Error("no go_goroutines: the runtime collector is missing")
	}
}

// client plays the MCP client's side of the script.
type client struct {
	t    *testing.T
	base string
}

// do sends one request with the session header and returns how many SSE
// events the answer carried.
func (c *client) do(method, body, lastEventID string) int {
	c.t.Helper()
	resp := c.send(method, body, lastEventID)
	defer resp.Body.Close()
	n, err := countEvents(resp.Body, nil)
	if err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	return n
}

func (c *client) send(method, body, lastEventID string) *http.Response {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	c.t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, method, c.base, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Accept", "application/json, text/event-stream")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, c.base, err)
	}
	return resp
}

// open starts a standalone GET and reports the count of events as each
// arrives; done yields the stream's end.
func (c *client) open() (events <-chan int, done <-chan error) {
	resp := c.send(http.MethodGet, "", "")
	ev := make(chan int, 16)
	d := make(chan error, 1)
	go func() {
		defer resp.Body.Close()
		_, err := countEvents(resp.Body, ev)
		d <- err
	}()
	return ev, d
}

// countEvents counts the SSE events of body; each count is also sent on
// progress when it is not nil.
func countEvents(body io.Reader, progress chan<- int) (int, error) {
	br := bufio.NewReader(body)
	n, inEvent := 0, false
	for {
		line, err := br.ReadString('\n')
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		switch {
		case line == "\n" && inEvent:
			n++
			inEvent = false
			if progress != nil {
				progress <- n
			}
		case line != "\n" && !strings.HasPrefix(line, ":"):
			inEvent = true
		}
	}
}

// gather scrapes url and parses the text format.
func gather(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("scrape Content-Type %q, want the text format", ct)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing the scrape: %v", err)
	}
	return fams
}

// find returns the metric of family name whose labels include labels.
func find(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) *dto.Metric {
	t.Helper()
	fam, ok := fams[name]
	if !ok {
		t.Fatalf("no metric family %s", name)
	}
next:
	for _, m := range fam.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range labels {
			if have[k] != v {
				continue next
			}
		}
		return m
	}
	t.Fatalf("no %s with labels %v", name, labels)
	return nil
}

func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	t.Helper()
	return find(t, fams, name, labels).GetCounter().GetValue()
}

func gauge(t *testing.T, fams map[string]*dto.MetricFamily, name string) float64 {
	t.Helper()
	return find(t, fams, name, nil).GetGauge().GetValue()
}

// checkHistogram checks a histogram's count, sum and some cumulative
// bucket counts (upper bound -> count).
func checkHistogram(t *testing.T, fams map[string]*dto.MetricFamily, name string, count uint64, sum float64, buckets map[float64]uint64) {
	t.Helper()
	h := find(t, fams, name, nil).GetHistogram()
	if h.GetSampleCount() != count {
		t.Errorf("%s count = %d, want %d", name, h.GetSampleCount(), count)
	}
	if d := h.GetSampleSum() - sum; d > 1e-9 || d < -1e-9 {
		t.Errorf("%s sum = %v, want %v", name, h.GetSampleSum(), sum)
	}
	seen := 0
	for _, b := range h.GetBucket() {
		if want, ok := buckets[b.GetUpperBound()]; ok {
			seen++
			if b.GetCumulativeCount() != want {
				t.Errorf("%s bucket le=%v = %d, want %d", name, b.GetUpperBound(), b.GetCumulativeCount(), want)
			}
		}
	}
	if seen != len(buckets) {
		t.Errorf("%s: found %d of the %d buckets checked", name, seen, len(buckets))
	}
}

// TestOpenMetricsOnRequest: a scraper that asks for OpenMetrics gets it.
func TestOpenMetricsOnRequest(t *testing.T) {
	srv := httptest.NewServer(metrics.New(metrics.Options{NoRuntime: true}).Handler())
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header.Set("Accept", "application/openmetrics-text;version=1.0.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/openmetrics-text") {
		t.Errorf("Content-Type %q, want OpenMetrics", ct)
	}
	if !strings.HasSuffix(string(body), "# EOF\n") || !strings.Contains(string(body), "\nfray_open_streams 0") {
		t.Errorf("not an OpenMetrics exposition of fray's metrics:\n%s", body)
	}
}

// eventObservation is a delivered progress notification on an open POST
// stream, with one fault firing, as the pump reports it.
func eventObservation() *observe.Observation {
	return &observe.Observation{
		Kind: observe.KindEvent, At: time.Second, Exchange: 7, Stream: mcp.StreamPost,
		Session: "s", SessionSeq: 1,
		Fired: []faults.Firing{{Index: 0, Kind: "delay"}},
		Event: &observe.Event{Event: mcp.Event{Index: 3, Raw: []byte("data: {}\n\n"), Parsed: true, Dispatched: true, RPCKind: mcp.RPCNotification, RPCMethod: []byte("notifications/progress")}, Fate: observe.Delivered, DeliveredAt: time.Second + 40*time.Microsecond, Copies: 1},
	}
}

// openStream reports the response head of exchange 7, so that its events
// are those of an open stream.
func openStream(m *metrics.Metrics) {
	m.Observe(&observe.Observation{Kind: observe.KindResponse, Exchange: 7, Stream: mcp.StreamPost,
		Response: &observe.Response{Status: 200, EventStream: true}})
}

// BenchmarkObserveEvent measures what the metrics cost per event: the
// counters, the added-latency histogram and one fault firing.
func BenchmarkObserveEvent(b *testing.B) {
	m := metrics.New(metrics.Options{NoRuntime: true})
	openStream(m)
	o := eventObservation()
	b.ReportAllocs()
	for b.Loop() {
		m.Observe(o)
	}
}

// BenchmarkObserveEventParallel is BenchmarkObserveEvent from every core at
// once, as many streams report at the same time.
func BenchmarkObserveEventParallel(b *testing.B) {
	m := metrics.New(metrics.Options{NoRuntime: true})
	openStream(m)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		o := eventObservation()
		for pb.Next() {
			m.Observe(o)
		}
	})
}

// TestObserveEventAllocatesNothing: counting an event, a response event
// included, allocates nothing.
func TestObserveEventAllocatesNothing(t *testing.T) {
	m := metrics.New(metrics.Options{NoRuntime: true})
	openStream(m)
	note := eventObservation()
	resp := eventObservation()
	resp.Event.RPCKind, resp.Event.RPCMethod, resp.Event.RPCID = mcp.RPCResponse, nil, []byte("2")
	for name, o := range map[string]*observe.Observation{"notification": note, "response": resp} {
		if n := testing.AllocsPerRun(1000, func() { m.Observe(o) }); n != 0 {
			t.Errorf("%s event: %v allocations per Observe, want 0", name, n)
		}
	}
}
