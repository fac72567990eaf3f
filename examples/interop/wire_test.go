package interop_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/frayproxy/fray/examples/node/nodepeer"
	"github.com/frayproxy/fray/proxy"
)

// exchange is one HTTP exchange seen by a wireLog.
type exchange struct {
	Method      string
	Path        string
	LastEventID string // request's Last-Event-ID header
	Status      int
	ContentType string
	EventIDs    []string // SSE ids in the response body, in order
}

func (e *exchange) String() string {
	s := fmt.Sprintf("%s %s -> %d %s", e.Method, e.Path, e.Status, e.ContentType)
	if e.LastEventID != "" {
		s += fmt.Sprintf(" [Last-Event-ID %s]", e.LastEventID)
	}
	if len(e.EventIDs) > 0 {
		s += fmt.Sprintf(" ids=%v", e.EventIDs)
	}
	return s
}

// wireLog records the exchanges passing through a handler it wraps: each
// request's method, path and Last-Event-ID, and each SSE response's event
// ids. It is safe for concurrent use.
type wireLog struct {
	mu  sync.Mutex
	exs []*exchange
}

// wrap returns h with every exchange recorded in l.
func (l *wireLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ex := &exchange{Method: r.Method, Path: r.URL.RequestURI(), LastEventID: r.Header.Get("Last-Event-ID")}
		l.mu.Lock()
		l.exs = append(l.exs, ex)
		l.mu.Unlock()
		h.ServeHTTP(&recordingWriter{ResponseWriter: w, log: l, ex: ex}, r)
	})
}

// snapshot returns a copy of the exchanges so far.
func (l *wireLog) snapshot() []exchange {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]exchange, len(l.exs))
	for i, ex := range l.exs {
		out[i] = *ex
		out[i].EventIDs = append([]string(nil), ex.EventIDs...)
	}
	return out
}

// sentID reports whether id appeared as an SSE id in a recorded response.
func (l *wireLog) sentID(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ex := range l.exs {
		for _, e := range ex.EventIDs {
			if e == id {
				return true
			}
		}
	}
	return false
}

func (l *wireLog) String() string {
	var b strings.Builder
	for _, ex := range l.snapshot() {
		fmt.Fprintf(&b, "  %s\n", &ex)
	}
	return b.String()
}

// recordingWriter notes the status and scans SSE bodies for id fields as
// they are written. Flush and Unwrap keep streaming working through it.
type recordingWriter struct {
	http.ResponseWriter
	log     *wireLog
	ex      *exchange
	sse     bool
	partial []byte
	wrote   bool
}

func (w *recordingWriter) WriteHeader(code int) {
	if !w.wrote {
		w.wrote = true
		ct := w.Header().Get("Content-Type")
		w.log.mu.Lock()
		w.ex.Status, w.ex.ContentType = code, ct
		w.log.mu.Unlock()
		w.sse = strings.HasPrefix(ct, "text/event-stream")
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recordingWriter) Write(p []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	if w.sse {
		w.scan(p)
	}
	return w.ResponseWriter.Write(p)
}

// scan extracts "id:" fields line by line (CR, LF or CRLF endings).
func (w *recordingWriter) scan(p []byte) {
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexAny(w.partial, "\r\n")
		if i < 0 {
			return
		}
		line := string(w.partial[:i])
		w.partial = w.partial[i+1:]
		if v, ok := strings.CutPrefix(line, "id:"); ok {
			v = strings.TrimPrefix(v, " ")
			w.log.mu.Lock()
			w.ex.EventIDs = append(w.ex.EventIDs, v)
			w.log.mu.Unlock()
		}
	}
}

func (w *recordingWriter) Flush() {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *recordingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

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
	log := &wireLog{}
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
	for _, ex := range fray.snapshot() {
		if ex.Method != http.MethodGet || ex.LastEventID == "" {
			continue
		}
		gets = append(gets, ex.LastEventID)
		if ex.Status == http.StatusOK && serverSent(ex.LastEventID) && fray.sentID(ex.LastEventID) {
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
