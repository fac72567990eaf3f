package interop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// captureDir holds real 2026-07-28 exchanges: for each capture, the fray
// trace of the run (NAME.jsonl, for `fray check`) and what passed on the
// wire between fray and the server, bodies included (NAME.wire.json).
// FRAY_CAPTURE_UPDATE=1 rewrites them from a live run.
const captureDir = "testdata/era2026"

// capture is one pair run once through fray with its wire recorded.
type capture struct {
	name    string // file name in captureDir
	pair    string // the eraPairs name whose expectation holds
	profile string
	start   startServer
	client  runClientFor
	// accel is the X-Accel-Buffering the server sends on its SSE
	// responses ("" for none).
	accel string
	// notifications are the JSON-RPC notifications the client POSTs.
	notifications []string
}

// captures are the 2026-07-28 exchanges kept in captureDir: each SDK's own
// pair with no fault (the TypeScript one with a subscriptions/listen
// stream), each under lossy-resume (a cut call no client re-issues), and
// mcp-go against the Go SDK's stateful handler (a DiscoverResult that does
// not offer the revision asked for).
var captures = []capture{
	{name: "ts2", pair: "ts2←ts2-server@" + era2026, start: startTSModern, client: tsModernClient(era2026, true), accel: "no", notifications: []string{"notifications/cancelled"}},
	{name: "ts2-lossy-resume", pair: "ts2←ts2-server@" + era2026, profile: "lossy-resume", start: startTSModern,
		client: tsModernClient(era2026, false), accel: "no"},
	{name: "go-sdk", pair: "go-sdk←go-sdk-stateless@" + era2026, start: startGoStateless, client: goSDKEraClient(era2026)},
	{name: "go-sdk-lossy-resume", pair: "go-sdk←go-sdk-stateless@" + era2026, profile: "lossy-resume", start: startGoStateless,
		client: goSDKEraClient(era2026)},
	{name: "mcp-go", pair: "mcp-go←mcp-go@" + era2026, start: startMCPGoStreamable, client: mcpGoEraClient(era2026)},
	{name: "mcp-go-lossy-resume", pair: "mcp-go←mcp-go@" + era2026, profile: "lossy-resume", start: startMCPGoStreamable,
		client: mcpGoEraClient(era2026)},
	{name: "mcp-go-discover-go-sdk-server", pair: "mcp-go←go-sdk-server@" + eraAuto, start: startGoStreamable,
		client: mcpGoEraClient(era2026)},
}

// TestCapture2026 runs each capture through fray with a recorder between
// fray and the server, holds the verdict to eraExpectation and the wire to
// what revision 2026-07-28 asks of it (checkWire2026). With
// FRAY_CAPTURE_UPDATE=1 it rewrites captureDir.
func TestCapture2026(t *testing.T) {
	if testing.Short() {
		t.Skip("captures run real peers; not in -short (TestCaptured2026 reads the kept ones)")
	}
	for _, c := range captures {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), eraPairTimeout)
			defer cancel()
			up := c.start(ctx, t)
			takeCapture(ctx, t, c, up, func(*wireRecorder) runClientFor { return c.client })
		})
	}
}

// takeCapture runs c's client through fray in front of a recorder in front
// of up, holds the verdict to eraExpectation and the wire to checkWire2026,
// and returns the wire. With FRAY_CAPTURE_UPDATE=1 it keeps the trace and
// the wire (NAME.wire.json) in captureDir.
func takeCapture(ctx context.Context, t *testing.T, c capture, up upstream, client func(*wireRecorder) runClientFor) []wireExchange {
	t.Helper()
	update := os.Getenv("FRAY_CAPTURE_UPDATE") == "1"
	rec := newWireRecorder(t, up.origin)
	dir := t.TempDir()
	if update {
		dir = captureDir
	}
	o := frayRunThirdParty(ctx, t, upstream{origin: rec.url, path: up.path, serverSent: up.serverSent},
		c.profile, eraSeed(c.pair, c.profile), client(rec), eraClientTimeout, filepath.Join(dir, c.name+".jsonl"))
	checkEra(t, c.pair, o)
	wire := rec.exchanges()
	checkWire2026(t, c, wire)
	if update {
		b, err := json.MarshalIndent(wire, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(captureDir, c.name+".wire.json"), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return wire
}

// startMCPGoStreamable serves mcpgopeer's Streamable HTTP handler.
var startMCPGoStreamable = startMCPGo("streamable")

// wireExchange is one HTTP exchange as it passed between fray and the
// server. Date is left out of the headers: it is all that changes from one
// run to the next besides the SDKs' random ids.
type wireExchange struct {
	Method         string          `json:"method"`
	Path           string          `json:"path"`
	RequestHeader  http.Header     `json:"request_header"`
	RequestBody    json.RawMessage `json:"request_body,omitempty"`
	Status         int             `json:"status"`
	ResponseHeader http.Header     `json:"response_header"`
	// ResponseBody is the body as sent: one JSON object, or SSE text.
	ResponseBody string `json:"response_body"`
}

// wireRecorder is a reverse proxy to one origin that records every
// exchange. It is safe for concurrent use.
type wireRecorder struct {
	url string
	mu  sync.Mutex
	exs []*wireExchange
	bod []*bytes.Buffer
	// changed is closed, and replaced, whenever a body grows.
	changed chan struct{}
}

func newWireRecorder(t *testing.T, origin string) *wireRecorder {
	u, err := url.Parse(origin)
	if err != nil {
		t.Fatalf("recorder: origin %q: %v", origin, err)
	}
	r := &wireRecorder{changed: make(chan struct{})}
	rp := &httputil.ReverseProxy{
		Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(u); pr.Out.Host = pr.In.Host },
		FlushInterval: -1,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		ex := &wireExchange{Method: req.Method, Path: req.URL.RequestURI(), RequestHeader: req.Header.Clone()}
		if json.Valid(body) {
			ex.RequestBody = body
		}
		buf := &bytes.Buffer{}
		r.mu.Lock()
		r.exs, r.bod = append(r.exs, ex), append(r.bod, buf)
		r.mu.Unlock()
		rp.ServeHTTP(&teeWriter{ResponseWriter: w, rec: r, ex: ex, buf: buf}, req)
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	r.url = srv.URL
	return r
}

// waitFor waits until a response body holds s, or ctx ends.
func (r *wireRecorder) waitFor(ctx context.Context, s string) error {
	for {
		r.mu.Lock()
		found := slices.ContainsFunc(r.bod, func(b *bytes.Buffer) bool { return bytes.Contains(b.Bytes(), []byte(s)) })
		changed := r.changed
		r.mu.Unlock()
		if found {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("waiting for %q in a response: %w", s, ctx.Err())
		}
	}
}

// exchanges returns a copy of what was recorded, in arrival order.
func (r *wireRecorder) exchanges() []wireExchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]wireExchange, len(r.exs))
	for i, ex := range r.exs {
		out[i] = *ex
		out[i].ResponseBody = r.bod[i].String()
		out[i].RequestHeader = withoutDate(ex.RequestHeader)
		out[i].ResponseHeader = withoutDate(ex.ResponseHeader)
	}
	return out
}

func withoutDate(h http.Header) http.Header {
	h = h.Clone()
	h.Del("Date")
	return h
}

// teeWriter passes a response through and records it.
type teeWriter struct {
	http.ResponseWriter
	rec *wireRecorder
	ex  *wireExchange
	buf *bytes.Buffer
}

func (w *teeWriter) WriteHeader(code int) {
	w.rec.mu.Lock()
	w.ex.Status, w.ex.ResponseHeader = code, w.Header().Clone()
	w.rec.mu.Unlock()
	w.ResponseWriter.WriteHeader(code)
}

func (w *teeWriter) Write(p []byte) (int, error) {
	w.rec.mu.Lock()
	if w.ex.Status == 0 {
		w.ex.Status, w.ex.ResponseHeader = http.StatusOK, w.Header().Clone()
	}
	w.buf.Write(p)
	close(w.rec.changed)
	w.rec.changed = make(chan struct{})
	w.rec.mu.Unlock()
	return w.ResponseWriter.Write(p)
}

func (w *teeWriter) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

func (w *teeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// TestCaptured2026 holds the kept captures to what they showed when they
// were taken: `fray check` of each trace gives the verdict eraExpectation
// gives, and each wire record passes checkWire2026. It needs no peer.
func TestCaptured2026(t *testing.T) {
	for _, c := range append(slices.Clone(captures), listenCaptures...) {
		t.Run(c.name, func(t *testing.T) {
			rep := checkTraceFile(t, filepath.Join(captureDir, c.name+".jsonl"))
			o := frayOutcome{Profile: c.profile, Report: rep}
			o.Client.OK = rep.Command == nil || rep.Command.ExitCode == 0
			if !o.Client.OK {
				o.Client.Error = rep.Command.Error
			}
			checkEra(t, c.pair, o)
			b, err := os.ReadFile(filepath.Join(captureDir, c.name+".wire.json"))
			if err != nil {
				t.Fatal(err)
			}
			var wire []wireExchange
			if err := json.Unmarshal(b, &wire); err != nil {
				t.Fatalf("%s.wire.json: %v", c.name, err)
			}
			checkWire2026(t, c, wire)
		})
	}
}
