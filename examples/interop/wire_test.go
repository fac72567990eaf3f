package interop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/frayproxy/fray/examples/node/nodepeer"
	"github.com/frayproxy/fray/proxy"
)

// wireExchange is one HTTP exchange a wireLog recorded. Date is left out of
// the headers: it is all that changes from one run to the next besides the
// SDKs' random ids.
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

// eventIDs are the SSE ids in an event-stream response body, in order.
func (ex *wireExchange) eventIDs() []string {
	if !strings.HasPrefix(ex.ResponseHeader.Get("Content-Type"), "text/event-stream") {
		return nil
	}
	var ids []string
	for line := range strings.FieldsFuncSeq(ex.ResponseBody, func(r rune) bool { return r == '\r' || r == '\n' }) {
		if v, ok := strings.CutPrefix(line, "id:"); ok {
			ids = append(ids, strings.TrimPrefix(v, " "))
		}
	}
	return ids
}

func (ex *wireExchange) String() string {
	s := fmt.Sprintf("%s %s -> %d %s", ex.Method, ex.Path, ex.Status, ex.ResponseHeader.Get("Content-Type"))
	if lei := ex.RequestHeader.Get("Last-Event-ID"); lei != "" {
		s += fmt.Sprintf(" [Last-Event-ID %s]", lei)
	}
	if ids := ex.eventIDs(); len(ids) > 0 {
		s += fmt.Sprintf(" ids=%v", ids)
	}
	return s
}

// wireLog records every exchange passing through a handler it wraps,
// bodies included. It is safe for concurrent use.
type wireLog struct {
	mu  sync.Mutex
	exs []*wireExchange
	bod []*bytes.Buffer
	// changed is closed, and replaced, whenever a body grows.
	changed chan struct{}
}

func newWireLog() *wireLog { return &wireLog{changed: make(chan struct{})} }

// wrap returns h with every exchange recorded in l.
func (l *wireLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		ex := &wireExchange{Method: req.Method, Path: req.URL.RequestURI(), RequestHeader: req.Header.Clone()}
		if json.Valid(body) {
			ex.RequestBody = body
		}
		buf := &bytes.Buffer{}
		l.mu.Lock()
		l.exs, l.bod = append(l.exs, ex), append(l.bod, buf)
		l.mu.Unlock()
		h.ServeHTTP(&teeWriter{ResponseWriter: w, log: l, ex: ex, buf: buf}, req)
	})
}

// newWireRecorder serves a reverse proxy to origin, recording every
// exchange, until the test ends; the log's URL is the proxy's.
func newWireRecorder(t *testing.T, origin string) (*wireLog, string) {
	u, err := url.Parse(origin)
	if err != nil {
		t.Fatalf("recorder: origin %q: %v", origin, err)
	}
	l := newWireLog()
	rp := &httputil.ReverseProxy{
		Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(u); pr.Out.Host = pr.In.Host },
		FlushInterval: -1,
	}
	return l, serveTest(t, l.wrap(rp)).URL
}

// waitFor waits until a response body holds s, or ctx ends.
func (l *wireLog) waitFor(ctx context.Context, s string) error {
	for {
		l.mu.Lock()
		found := slices.ContainsFunc(l.bod, func(b *bytes.Buffer) bool { return bytes.Contains(b.Bytes(), []byte(s)) })
		changed := l.changed
		l.mu.Unlock()
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
func (l *wireLog) exchanges() []wireExchange {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]wireExchange, len(l.exs))
	for i, ex := range l.exs {
		out[i] = *ex
		out[i].ResponseBody = l.bod[i].String()
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

// sentID reports whether id appeared as an SSE id in a recorded response.
func (l *wireLog) sentID(id string) bool {
	return slices.ContainsFunc(l.exchanges(), func(ex wireExchange) bool { return slices.Contains(ex.eventIDs(), id) })
}

func (l *wireLog) String() string {
	var b strings.Builder
	for _, ex := range l.exchanges() {
		fmt.Fprintf(&b, "  %s\n", &ex)
	}
	return b.String()
}

// teeWriter passes a response through and records it. Flush and Unwrap
// keep streaming working through it.
type teeWriter struct {
	http.ResponseWriter
	log *wireLog
	ex  *wireExchange
	buf *bytes.Buffer
}

func (w *teeWriter) WriteHeader(code int) {
	w.log.mu.Lock()
	w.ex.Status, w.ex.ResponseHeader = code, w.Header().Clone()
	w.log.mu.Unlock()
	w.ResponseWriter.WriteHeader(code)
}

// noteOK records the implicit 200 of a response written or flushed
// before its header.
func (w *teeWriter) noteOK() {
	if w.ex.Status == 0 {
		w.ex.Status, w.ex.ResponseHeader = http.StatusOK, w.Header().Clone()
	}
}

func (w *teeWriter) Write(p []byte) (int, error) {
	w.log.mu.Lock()
	w.noteOK()
	w.buf.Write(p)
	close(w.log.changed)
	w.log.changed = make(chan struct{})
	w.log.mu.Unlock()
	return w.ResponseWriter.Write(p)
}

func (w *teeWriter) Flush() {
	w.log.mu.Lock()
	w.noteOK()
	w.log.mu.Unlock()
	http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *teeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// startFray runs fray in-process in front of upstream (an origin such as
// http://127.0.0.1:PORT) and returns its base URL and the log of what
// crossed it on the client side.
func startFray(t *testing.T, upstream string) (string, *wireLog) {
	return startFrayWith(t, upstream, proxy.Options{Logger: testLogger(t)})
}

// startFrayWith is startFray with opts, Upstream aside.
func startFrayWith(t *testing.T, upstream string, opts proxy.Options) (string, *wireLog) {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatalf("upstream %q: %v", upstream, err)
	}
	opts.Upstream = u
	eng, err := proxy.New(opts)
	if err != nil {
		t.Fatalf("proxy.New: %v", err)
	}
	log := newWireLog()
	return serveTest(t, log.wrap(eng.Handler())).URL, log
}

// serveTest serves h on loopback until the test ends, when it closes the
// connections still open: Close waits for active requests, and a stream
// still open to a client must not hold the test up.
func serveTest(t *testing.T, h http.Handler) *httptest.Server {
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv
}

// testLogger returns a logger for fray whose last lines are shown only if t
// fails, so nothing is logged to t after it completes.
func testLogger(t *testing.T) *slog.Logger {
	buf := &nodepeer.SyncBuffer{}
	t.Cleanup(func() {
		if !t.Failed() || buf.String() == "" {
			return
		}
		lines := strings.SplitAfter(buf.String(), "\n")
		if len(lines) > 60 {
			t.Logf("fray log (last 60 of %d lines):\n%s", len(lines), strings.Join(lines[len(lines)-60:], ""))
			return
		}
		t.Logf("fray log:\n%s", buf)
	})
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// splitURL splits an endpoint URL into its origin and its path.
func splitURL(t *testing.T, endpoint string) (origin, path string) {
	t.Helper()
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatalf("endpoint %q: %v", endpoint, err)
	}
	return u.Scheme + "://" + u.Host, u.RequestURI()
}

// requireResumedThroughFray fails t unless the client sent, through fray, a
// GET whose Last-Event-ID is an id the server sent and fray delivered, and
// fray answered it 200.
func requireResumedThroughFray(t *testing.T, fray *wireLog, serverSent func(string) bool) {
	t.Helper()
	var gets []string
	for _, ex := range fray.exchanges() {
		lei := ex.RequestHeader.Get("Last-Event-ID")
		if ex.Method != http.MethodGet || lei == "" {
			continue
		}
		gets = append(gets, lei)
		if ex.Status == http.StatusOK && serverSent(lei) && fray.sentID(lei) {
			return
		}
	}
	t.Fatalf("no GET through fray resumed with a Last-Event-ID the server sent (Last-Event-IDs seen: %q); exchanges at fray:\n%s", gets, fray)
}

// requireNode returns the Node environment, skipping the test loudly if node
// or npm is missing and running npm ci once if the dependencies are not
// installed yet.
func requireNode(t *testing.T) nodepeer.Env {
	t.Helper()
	return nodepeer.Require(t, "../node", "the TypeScript SDK and conformance interop tests")
}

// lastJSONLine returns the last line of out that looks like a JSON object.
func lastJSONLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); strings.HasPrefix(l, "{") {
			return l
		}
	}
	return ""
}
