package forward_test

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/forward"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// The two ways fray reaches the upstream: its own (Transport nil), where a
// GET event stream to an http upstream has a connection of its own, and a
// transport given, which carries everything.
var (
	ownConns     = func(*forward.Options) {}
	givenTranspt = func(o *forward.Options) { o.Transport = forward.NewTransport(nil) }
)

// sameBothWays runs run through fray's own connections and through a
// transport given, fails the test if the two differ, and returns what
// fray's own gave.
func sameBothWays(t *testing.T, run func(name string, mod func(*forward.Options)) string) string {
	t.Helper()
	own, tr := run("own", ownConns), run("transport", givenTranspt)
	if own != tr {
		t.Errorf("on its own connection:\n%s\nthrough the transport:\n%s", own, tr)
	}
	return own
}

// rawGet sends a GET to addr on a connection of the test's own (no
// client transport, so no goroutine of the test's counts against fray)
// and returns the response head; the body is read from it.
func rawGet(t *testing.T, frayURL, path string, hdr map[string]string) (*http.Response, net.Conn) {
	t.Helper()
	u, _ := url.Parse(frayURL)
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	req, _ := http.NewRequest("GET", frayURL+path, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if err := req.Write(c); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp, c
}

// transportLoops counts the goroutines that read the connections of
// every http.Transport in the process.
func transportLoops() int {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return bytes.Count(buf, []byte("net/http.(*persistConn).readLoop("))
}

// TestEventStreamHasConnectionOfItsOwn: a GET event stream through fray's
// own transport to an http upstream starts no transport connection (no
// read loop), and its connection is not reused: the next stream dials
// again. Through a transport given, the connection has its read loop and
// goes back to the pool for the next stream.
func TestEventStreamHasConnectionOfItsOwn(t *testing.T) {
	for _, tc := range []struct {
		name      string
		mod       func(*forward.Options)
		wantLoops int
		wantConns int32
	}{
		{"fray's own", ownConns, 0, 2},
		{"a transport given", givenTranspt, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				sseHeader(w)
				writePieces(w, "data: 1\n\n")
				<-release
			}))
			var conns atomic.Int32
			up.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					conns.Add(1)
				}
			}
			up.Start()
			defer up.Close()
			fray, _ := front(t, up.URL, tc.mod)
			http.DefaultTransport.(*http.Transport).CloseIdleConnections()
			before := transportLoops()
			resp, _ := rawGet(t, fray, "/mcp", map[string]string{"Accept": "text/event-stream"})
			br := firstLine(t, resp.Body, "data: 1\n")
			// At least or at most: connections of earlier tests may still
			// be winding down, never starting.
			if got := transportLoops() - before; tc.wantLoops == 0 && got > 0 || tc.wantLoops > 0 && got < tc.wantLoops {
				t.Errorf("transport read loops while the stream is open: %d more, want %d", got, tc.wantLoops)
			}
			close(release)
			if _, err := io.Copy(io.Discard, br); err != nil {
				t.Fatalf("body: %v", err)
			}
			resp, _ = rawGet(t, fray, "/mcp", map[string]string{"Accept": "text/event-stream"})
			if _, err := io.Copy(io.Discard, resp.Body); err != nil {
				t.Fatalf("second body: %v", err)
			}
			if got := conns.Load(); got != tc.wantConns {
				t.Errorf("upstream connections for two streams one after the other: %d, want %d", got, tc.wantConns)
			}
		})
	}
}

// capture serves one request on each connection: it keeps the request's
// bytes and answers with an empty event stream.
func capture(t *testing.T) (addr string, got <-chan []byte) {
	ch := make(chan []byte, 4)
	addr = tcpServer(t, func(c net.Conn) {
		defer c.Close()
		var raw bytes.Buffer
		if _, err := http.ReadRequest(bufio.NewReader(io.TeeReader(c, &raw))); err != nil {
			return
		}
		ch <- raw.Bytes()
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 0\r\n\r\n")
	})
	return addr, ch
}

var viaField = regexp.MustCompile(`fray-[0-9a-f]{8}`)

// TestEventStreamRequestBytesAsTransport: the upstream receives, byte for
// byte, what fray's transport would have sent for the same GET (the Via
// field names each proxy differently), session and Last-Event-ID included.
func TestEventStreamRequestBytesAsTransport(t *testing.T) {
	hdr := map[string]string{
		"Accept":               "text/event-stream",
		mcp.HeaderSession:      "s-1",
		mcp.HeaderLastEventID:  "ev-7",
		"Mcp-Protocol-Version": "2025-06-18",
		"X-Custom":             "a, b",
		"Connection":           "keep-alive, X-Hop",
		"X-Hop":                "dropped",
		"User-Agent":           "",
	}
	addr, got := capture(t)
	sent := sameBothWays(t, func(_ string, mod func(*forward.Options)) string {
		fray, _ := front(t, "http://"+addr+"/base", mod)
		resp, _ := rawGet(t, fray, "/mcp?x=1", hdr)
		resp.Body.Close()
		return string(viaField.ReplaceAll(<-got, []byte("fray-VIA")))
	})
	for _, want := range []string{"GET /base/mcp?x=1 HTTP/1.1\r\n", "Mcp-Session-Id: s-1\r\n", "Last-Event-Id: ev-7\r\n", "X-Custom: a, b\r\n"} {
		if !strings.Contains(sent, want) {
			t.Errorf("request lacks %q:\n%s", want, sent)
		}
	}
	if strings.Contains(sent, "X-Hop") {
		t.Errorf("hop-by-hop field forwarded:\n%s", sent)
	}
}

// answering is an upstream that answers every request with the given bytes, then closes.
func answering(t *testing.T, answer string) string {
	return tcpServer(t, func(c net.Conn) {
		defer c.Close()
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			return
		}
		io.WriteString(c, answer)
	})
}

// TestEventStreamBodyFramings: chunked, close-delimited and
// content-length event stream bodies, and an interim 103 before the head,
// reach the client whole on a connection of fray's own.
func TestEventStreamBodyFramings(t *testing.T) {
	const events = "id: 1\ndata: {\"a\":1}\n\nid: 2\ndata: {\"b\":2}\n\n"
	sse := "Content-Type: text/event-stream\r\n"
	for _, tc := range []struct{ name, answer string }{
		{"chunked", "HTTP/1.1 200 OK\r\n" + sse + "Transfer-Encoding: chunked\r\n\r\n" +
			"10\r\n" + events[:16] + "\r\n" + strconv.FormatInt(int64(len(events)-16), 16) + "\r\n" + events[16:] + "\r\n0\r\n\r\n"},
		{"close-delimited", "HTTP/1.1 200 OK\r\n" + sse + "Connection: close\r\n\r\n" + events},
		{"content-length", "HTTP/1.1 200 OK\r\n" + sse + "Content-Length: " + itoa(len(events)) + "\r\n\r\n" + events},
		{"after 103", "HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\nHTTP/1.1 200 OK\r\n" + sse + "Content-Length: " + itoa(len(events)) + "\r\n\r\n" + events},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fray, _ := front(t, "http://"+answering(t, tc.answer))
			resp, _ := rawGet(t, fray, "/mcp", nil)
			body, err := io.ReadAll(resp.Body)
			if err != nil || resp.StatusCode != 200 || string(body) != events {
				t.Errorf("status %d, body %q, %v; want 200, %q", resp.StatusCode, body, err, events)
			}
		})
	}
}

// TestGetAnswersPassAsBefore: what an upstream answers a GET with that is
// not an event stream (405, 404, JSON) reaches the client as it did
// through the transport.
func TestGetAnswersPassAsBefore(t *testing.T) {
	up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/405":
			w.Header().Set("Allow", "POST, DELETE")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
		default:
			http.NotFound(w, r)
		}
	})
	for _, path := range []string{"/405", "/404", "/json"} {
		got := sameBothWays(t, func(name string, mod func(*forward.Options)) string {
			fray, _ := front(t, up, mod)
			resp, _ := rawGet(t, fray, path, map[string]string{"Accept": "text/event-stream"})
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatalf("%s %s: %v", name, path, err)
			}
			resp.Header.Del("Date")
			var b strings.Builder
			resp.Header.Write(&b)
			return "GET " + path + "\n" + resp.Status + "\n" + b.String() + string(body)
		})
		if path == "/405" && !strings.Contains(got, "Allow: POST, DELETE") {
			t.Errorf("GET /405: %s", got)
		}
	}
}

// TestEventStreamEndsCloseUpstreamConnection: a client that goes away and
// a fault that closes the stream both close the upstream connection at
// once, and leave no goroutine behind.
func TestEventStreamEndsCloseUpstreamConnection(t *testing.T) {
	closeAt1 := &scriptPlan{event: onEvent(1, faults.EventAction{Close: faults.CloseBefore})}
	for name, plan := range map[string]faults.Plan{
		"client goes away":          nil,
		"a fault closes the stream": closeAt1,
	} {
		t.Run(name, func(t *testing.T) {
			checkNoLeaks(t)
			closed := make(chan struct{})
			up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
				sseHeader(w)
				writePieces(w, "data: 0\n\n", "data: 1\n\n")
				<-r.Context().Done() // the connection closed
				close(closed)
			})
			fray, _ := front(t, up, func(o *forward.Options) { o.Faults = plan })
			resp, c := rawGet(t, fray, "/mcp", nil)
			firstLine(t, resp.Body, "data: 0\n")
			if plan == nil {
				c.Close()
			}
			waitFor(t, closed, "upstream connection still open")
		})
	}
}

// endRecorder keeps the responses and ends fray observes.
type endRecorder struct{ list[string] }

func (e *endRecorder) Observe(o *observe.Observation) {
	switch o.Kind {
	case observe.KindResponse:
		e.add("response " + itoa(o.Response.Status) + " " + o.Response.Origin.String())
	case observe.KindEnd:
		e.add("end " + o.End.Cause.String() + ": " + o.End.Error)
	}
}

// TestEventStreamUpstreamFailuresAsBefore: an upstream that cannot be
// dialled, closes without answering, answers garbage or cuts its head
// short gives the client the same
// answer and the observers the same observations as through the
// transport.
func TestEventStreamUpstreamFailuresAsBefore(t *testing.T) {
	refused := deadAddr(t)
	silent := tcpServer(t, func(c net.Conn) {
		http.ReadRequest(bufio.NewReader(c))
		c.Close()
	})
	garbled := answering(t, "HTTP/1.1 two hundred\r\n\r\n")
	cut := answering(t, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n")
	for _, addr := range []string{refused, silent, garbled, cut} {
		got := sameBothWays(t, func(_ string, mod func(*forward.Options)) string {
			obs := &endRecorder{}
			fray, _ := front(t, "http://"+addr, mod, func(o *forward.Options) { o.Observer = obs })
			resp, _ := rawGet(t, fray, "/mcp", nil)
			body, _ := io.ReadAll(resp.Body)
			return resp.Status + " " + string(body) + strings.Join(obs.all(), "\n")
		})
		if !strings.HasPrefix(got, "502 ") || !strings.Contains(got, "end upstream-failed") {
			t.Errorf("got %s", got)
		}
	}
}

// TestEventStreamEndsAfterAWait: a stream on a connection of its own
// waits for its upstream without a buffer (sse.Waiter); whatever ends the
// body after such a wait reaches the client and the observers as through
// the transport: the last chunk, a body of known length that ends while
// its connection stays open (or has nothing in it at all), a chunked body
// cut short, and a connection reset, which keeps its own error, not the
// end of file that a second read of the reset connection gives.
func TestEventStreamEndsAfterAWait(t *testing.T) {
	const ev = "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n"
	chunk := func(s string) string { return strconv.FormatInt(int64(len(s)), 16) + "\r\n" + s + "\r\n" }
	head := "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
	chunked := head + "Transfer-Encoding: chunked\r\n\r\n" + chunk(ev)
	known := head + "Content-Length: " + itoa(2*len(ev)) + "\r\n\r\n" + ev
	hold := func(c net.Conn) { _, _ = c.Read(make([]byte, 1)) } // until the test ends
	for _, tc := range []struct {
		name     string
		first    string // written at once, after the request
		then     func(net.Conn)
		events   int
		wantEnd  string
		wantBody string
	}{
		{"last chunk", chunked, func(c net.Conn) { io.WriteString(c, "0\r\n\r\n"); hold(c) }, 1, "end complete: ", ev},
		{"known length, kept open", known, func(c net.Conn) { io.WriteString(c, ev); hold(c) }, 1, "end complete: ", ev + ev},
		{"empty, kept open", head + "Content-Length: 0\r\n\r\n", hold, 0, "end complete: ", ""},
		{"chunked cut", chunked, func(c net.Conn) { c.Close() }, 1, "end upstream-failed: unexpected EOF", ev},
		{"reset", chunked, func(c net.Conn) { c.(*net.TCPConn).SetLinger(0); c.Close() }, 1, "end upstream-failed: ", ev},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addrs := regexp.MustCompile(`[0-9.]+:[0-9]+`)
			got := sameBothWays(t, func(name string, mod func(*forward.Options)) string {
				next, stop := make(chan struct{}), make(chan struct{})
				addr := tcpServer(t, func(c net.Conn) {
					defer c.Close()
					if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
						return
					}
					io.WriteString(c, tc.first)
					if tc.events > 0 {
						select {
						case <-next:
						case <-stop: // the test failed before it read the first event
							return
						}
					}
					tc.then(c)
				})
				// Registered after tcpServer's, so run before it: a test that
				// stops early does not leave the server waiting.
				t.Cleanup(func() { close(stop) })
				obs := &endRecorder{}
				fray, _ := front(t, "http://"+addr, mod, func(o *forward.Options) { o.Observer = obs })
				resp, _ := rawGet(t, fray, "/mcp", nil)
				br := bufio.NewReader(resp.Body)
				var body strings.Builder
				if tc.events > 0 {
					// The first event has reached the client: fray has
					// flushed, which it does before it waits.
					for !strings.HasSuffix(body.String(), "\n\n") {
						line, err := br.ReadString('\n')
						body.WriteString(line)
						if err != nil {
							t.Fatalf("%s: first event: %q, %v", name, body.String(), err)
						}
					}
					close(next)
				}
				rest, _ := io.ReadAll(br)
				body.Write(rest)
				ends := obs.all()
				if body.String() != tc.wantBody || len(ends) != 2 || !strings.HasPrefix(ends[1], tc.wantEnd) {
					t.Errorf("%s: body %q, observed %q; want %q, then %q", name, body.String(), ends, tc.wantBody, tc.wantEnd)
				}
				return addrs.ReplaceAllString(body.String()+"|"+strings.Join(ends, "|"), "ADDR")
			})
			if tc.name == "reset" && !strings.Contains(got, "reset by peer") {
				t.Errorf("a reset connection: %s", got)
			}
		})
	}
}

// countingTransport counts the requests it carries.
type countingTransport struct {
	rt http.RoundTripper
	n  atomic.Int32
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.rt.RoundTrip(r)
}

// TestEventStreamsThatKeepTheTransport: a transport given carries a GET
// stream; so does fray's own for an https upstream and when a proxy is
// configured.
func TestEventStreamsThatKeepTheTransport(t *testing.T) {
	stream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sseHeader(w)
		writePieces(w, "data: 1\n\n")
	})
	t.Run("a transport given", func(t *testing.T) {
		ct := &countingTransport{rt: forward.NewTransport(nil)}
		fray, _ := front(t, upServer(t, stream), func(o *forward.Options) { o.Transport = ct })
		resp, _ := rawGet(t, fray, "/mcp", nil)
		io.Copy(io.Discard, resp.Body)
		if ct.n.Load() != 1 {
			t.Errorf("the transport given carried %d requests, want 1", ct.n.Load())
		}
	})
	t.Run("https", func(t *testing.T) {
		states := make(chan http.ConnState, 16)
		up := httptest.NewUnstartedServer(stream)
		up.Config.ConnState = func(_ net.Conn, s http.ConnState) { states <- s }
		up.StartTLS()
		defer up.Close()
		fray, _ := front(t, up.URL, func(o *forward.Options) {
			o.UpstreamTLS = up.Client().Transport.(*http.Transport).TLSClientConfig
		})
		resp, _ := rawGet(t, fray, "/mcp", nil)
		if body, _ := io.ReadAll(resp.Body); string(body) != "data: 1\n\n" {
			t.Fatalf("body %q", body)
		}
		for s := range states {
			if s == http.StateIdle { // kept by the transport's pool
				return
			}
			if s == http.StateClosed {
				t.Fatal("https upstream connection closed after the stream, not kept by the transport")
			}
		}
	})
	t.Run("a proxy", func(t *testing.T) {
		var forwarded atomic.Int32
		fwd := upServer(t, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.IsAbs() { // the absolute form a proxy is sent
				forwarded.Add(1)
			}
			stream(w, r)
		})
		fwdURL, _ := url.Parse(fwd)
		p := newProxy(t, "http://upstream.invalid/", forward.Options{})
		forward.OwnTransport(p).Proxy = http.ProxyURL(fwdURL)
		resp, _ := rawGet(t, upServer(t, p.ServeHTTP), "/mcp", nil)
		io.Copy(io.Discard, resp.Body)
		if forwarded.Load() != 1 {
			t.Errorf("the proxy forwarded %d requests, want 1 (status %d)", forwarded.Load(), resp.StatusCode)
		}
	})
}

// TestEventStreamHeadBoundAsTransport: a response head past the
// transport's MaxResponseHeaderBytes is refused on a connection of fray's
// own as the transport refuses it.
func TestEventStreamHeadBoundAsTransport(t *testing.T) {
	const bound = 1 << 10
	addr := answering(t, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nX-Big: "+strings.Repeat("x", 2*bound)+"\r\n\r\n")
	got := sameBothWays(t, func(name string, _ func(*forward.Options)) string {
		var opts forward.Options
		if name == "transport" {
			tr := forward.NewTransport(nil)
			tr.MaxResponseHeaderBytes = bound
			opts.Transport = tr
		}
		p := newProxy(t, "http://"+addr, opts)
		if name == "own" {
			forward.OwnTransport(p).MaxResponseHeaderBytes = bound
		}
		resp, _ := rawGet(t, upServer(t, p.ServeHTTP), "/mcp", nil)
		body, _ := io.ReadAll(resp.Body)
		return resp.Status + " " + string(body)
	})
	if !strings.Contains(got, "exceeded 1024 bytes") {
		t.Errorf("on its own connection: %s", got)
	}
}
