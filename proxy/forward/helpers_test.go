package forward_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy/forward"
)

// front starts fray in front of upstream and returns fray's URL and a log
// recorder that sees every debug line.
func front(t *testing.T, upstream string, mod ...func(*forward.Options)) (string, *logRecorder) {
	t.Helper()
	rec := &logRecorder{}
	opts := forward.Options{Logger: slog.New(rec)}
	for _, m := range mod {
		m(&opts)
	}
	srv := httptest.NewServer(newProxy(t, upstream, opts))
	t.Cleanup(srv.Close)
	return srv.URL, rec
}

// newProxy builds fray with opts in front of upstream.
func newProxy(t testing.TB, upstream string, opts forward.Options) *forward.Proxy {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	opts.Upstream = u
	p, err := forward.New(opts)
	if err != nil {
		t.Fatalf("forward.New: %v", err)
	}
	return p
}

// upServer serves h on a loopback port until the test ends and returns
// its URL: an upstream, or fray where the test built the proxy itself.
func upServer(t testing.TB, h http.HandlerFunc) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// sseServer is an upstream that answers every request with an event
// stream of pieces, each flushed.
func sseServer(t testing.TB, pieces ...string) string {
	return upServer(t, func(w http.ResponseWriter, r *http.Request) {
		sseHeader(w)
		writePieces(w, pieces...)
	})
}

// testTLS returns a server configuration with a fresh self-signed
// certificate for 127.0.0.1 and a pool that trusts it.
func testTLS(t *testing.T) (*tls.Config, *x509.CertPool) {
	t.Helper()
	certDER, keyDER := selfSigned(t)
	key, err := x509.ParseECPrivateKey(keyDER)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(certDER)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{certDER}, PrivateKey: key}},
		MinVersion:   tls.VersionTLS12,
	}, pool
}

// dialSend opens a connection to addr that closes with the test, gives it
// a deadline and writes req on it.
func dialSend(t *testing.T, addr, req string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatalf("writing %q: %v", req, err)
	}
	return c
}

// logRecorder is a slog.Handler that keeps every record, for tests that
// assert on what fray logged.
type logRecorder struct{ recs list[slog.Record] }

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logRecorder) WithGroup(string) slog.Handler            { return l }
func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	l.recs.add(r.Clone())
	return nil
}

// find returns the attributes of every record with message msg, as strings.
func (l *logRecorder) find(msg string) []map[string]string {
	var out []map[string]string
	for _, r := range l.recs.all() {
		if r.Message != msg {
			continue
		}
		m := map[string]string{"level": r.Level.String()}
		r.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value.String(); return true })
		out = append(out, m)
	}
	return out
}

// text renders all records, for failure messages.
func (l *logRecorder) text() string {
	var b bytes.Buffer
	for _, r := range l.recs.all() {
		b.WriteString(r.Level.String() + " " + r.Message)
		r.Attrs(func(a slog.Attr) bool { b.WriteString(" " + a.Key + "=" + a.Value.String()); return true })
		b.WriteByte('\n')
	}
	return b.String()
}

// checkNoLeaks fails the test if goroutines started during it are still
// running once everything is closed. It waits (bounded) for them to exit,
// as servers close connections asynchronously.
func checkNoLeaks(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
		deadline := time.Now().Add(5 * time.Second)
		for {
			n := runtime.NumGoroutine()
			if n <= before {
				return
			}
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				buf = buf[:runtime.Stack(buf, true)]
				t.Errorf("%d goroutines before, %d after:\n%s", before, n, buf)
				return
			}
			runtime.Gosched()
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// waitFor waits for ch to be closed, and fails the test with msg if it is
// not within 10 s.
func waitFor(t *testing.T, ch <-chan struct{}, msg string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal(msg)
	}
}

// firstLine reads the first line of body, failing the test unless it is
// want, and returns the reader, for the rest.
func firstLine(t *testing.T, body io.Reader, want string) *bufio.Reader {
	t.Helper()
	br := bufio.NewReader(body)
	if line, err := br.ReadString('\n'); err != nil || line != want {
		t.Fatalf("first line %q, %v; want %q", line, err, want)
	}
	return br
}

// list is what goroutines (observers, upstreams) add to and a test
// reads, safe for concurrent use. The zero value is empty.
type list[T any] struct {
	mu    sync.Mutex
	items []T
}

func (l *list[T]) add(v T) {
	l.mu.Lock()
	l.items = append(l.items, v)
	l.mu.Unlock()
}

// all returns a copy of the items so far.
func (l *list[T]) all() []T {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.items)
}

// writePieces writes an SSE body in the given pieces, flushing each.
func writePieces(w http.ResponseWriter, pieces ...string) {
	f := w.(http.Flusher)
	for _, p := range pieces {
		_, _ = w.Write([]byte(p))
		f.Flush()
	}
}

// until waits, in an upstream's handler, for ch or for r to end, and
// reports whether ch came first.
func until(r *http.Request, ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	case <-r.Context().Done():
		return false
	}
}

func sseHeader(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

type proxyOptions = forward.Options

// listen opens a loopback listener that closes with the test.
func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// deadAddr returns a loopback address that nothing listens on.
func deadAddr(t *testing.T) string {
	ln := listen(t)
	ln.Close()
	return ln.Addr().String()
}

// tcpServer accepts connections on a loopback port and serves each with
// serve on a goroutine of its own; at cleanup it stops accepting, closes
// every connection (fray's idle keep-alive ones too) and waits for every
// goroutine. It returns the address.
func tcpServer(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln := listen(t)
	var wg sync.WaitGroup
	var conns list[net.Conn]
	t.Cleanup(func() {
		ln.Close()
		for _, c := range conns.all() {
			c.Close()
		}
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.add(c)
			wg.Go(func() { serve(c) })
		}
	})
	return ln.Addr().String()
}

// get GETs url with the default client; it fails the test if there is no
// response.
func get(t *testing.T, url string) *http.Response {
	t.Helper()
	return do(t, http.DefaultClient, must(http.NewRequest(http.MethodGet, url, nil)))
}

// post POSTs body to url as JSON with the default client; it fails the
// test if there is no response.
func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	req := must(http.NewRequest(http.MethodPost, url, strings.NewReader(body)))
	req.Header.Set("Content-Type", "application/json")
	return do(t, http.DefaultClient, req)
}

// do sends req with client; it fails the test if there is no response.
func do(t *testing.T, client *http.Client, req *http.Request) *http.Response {
	t.Helper()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// readBody reads resp's body to its end and closes it.
func readBody(resp *http.Response) (string, error) {
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return string(b), err
}

// roundTrip sends a request with the default client, the fields of hdr
// set, and returns the response and its body, read to the end however
// the reading ends; it fails the test if there is no response.
func roundTrip(t *testing.T, method, url, body string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req := must(http.NewRequest(method, url, strings.NewReader(body)))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp := do(t, http.DefaultClient, req)
	b, _ := readBody(resp)
	return resp, b
}

// recordingUpstream is an upstream that answers every request 200 with
// no body, once it has put what of says of the request on the channel
// returned (which holds 8).
func recordingUpstream(t testing.TB, of func(*http.Request) string) (string, <-chan string) {
	seen := make(chan string, 8)
	return upServer(t, func(w http.ResponseWriter, r *http.Request) { seen <- of(r) }), seen
}

// urlPath is what recordingUpstream records of most requests.
func urlPath(r *http.Request) string { return r.URL.Path }

// rawFray serves fray with no option set in front of upstream, as
// `fray proxy` does (serveFray), and returns its address.
func rawFray(t *testing.T, upstream string) string {
	t.Helper()
	return serveFray(t, newProxy(t, upstream, forward.Options{}), nil)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// activeProfile parses the profile text, named name, and makes it the
// plan in force.
func activeProfile(t testing.TB, name, text string) *profiles.Active {
	t.Helper()
	prof, err := profiles.Parse(name, strings.NewReader(text))
	if err != nil {
		t.Fatalf("profile %s:\n%s\n%v", name, text, err)
	}
	a, err := profiles.NewActive(prof, nil)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// inParallel runs job for 0 to n-1 on workers goroutines, job i on
// goroutine i%workers, each goroutine stopping at its first error, and
// returns those errors.
func inParallel(n, workers int, job func(i int) error) []error {
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				if err := job(i); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	var out []error
	for err := range errs {
		out = append(out, err)
	}
	return out
}
