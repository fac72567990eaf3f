package forward_test

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/forward"
	"github.com/frayproxy/fray/proxy/mcp"
)

// resetOnPath resets the streams of one path at their second event and
// leaves every other stream alone.
type resetOnPath struct{ path string }

func (p resetOnPath) Exchange(*mcp.Exchange) faults.ExchangeAction { return faults.ExchangeAction{} }
func (p resetOnPath) Stream(ex *mcp.Exchange) faults.StreamPlan {
	if ex.Path != p.path {
		return &scriptPlan{}
	}
	return &scriptPlan{event: onEvent(1, faults.EventAction{Close: faults.CloseReset})}
}

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	n atomic.Int32
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// TestHTTP2BothSides streams SSE through fray over HTTP/2 on both sides
// (a TLS listener served by forward.Serve, an h2 upstream reached through
// forward.NewTransport), byte for byte, and checks that a reset fault on one
// h2 stream resets that stream only: a stream beside it on the same
// connection goes on to its end, and the connection serves the next
// request.
func TestHTTP2BothSides(t *testing.T) {
	checkNoLeaks(t)
	release := make(chan struct{})
	var upProtos sync.Map // path -> proto the upstream saw
	var upConns atomic.Int32
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		upProtos.Store(r.URL.Path, r.Proto)
		sseHeader(w)
		if r.URL.Path != "/keep" {
			writePieces(w, split(threeEvents, 20)...)
			return
		}
		writePieces(w, "id: k1\ndata: first\n\n")
		if !until(r, release) {
			return
		}
		writePieces(w, "id: k2\ndata: second\n\n")
	})
	upURL, tr := h2Upstream(t, up, func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			upConns.Add(1)
		}
	})
	ln := &countingListener{Listener: listen(t)}
	client, base := h2Serve(t, ln, newProxy(t, upURL, forward.Options{Transport: tr, Faults: resetOnPath{"/reset"}}))

	get := func(path string) *http.Response {
		t.Helper()
		resp := do(t, client, must(http.NewRequest(http.MethodGet, base+path, nil)))
		if resp.ProtoMajor != 2 {
			t.Fatalf("%s: the client got %s, want HTTP/2", path, resp.Proto)
		}
		return resp
	}

	body, err := readBody(get("/mcp"))
	if err != nil || body != threeEvents {
		t.Fatalf("over h2: %q, %v; want %q", body, err, threeEvents)
	}

	keep := get("/keep")
	defer keep.Body.Close()
	kr := bufio.NewReader(keep.Body)
	if first, err := readBlock(kr); err != nil || first != "id: k1\ndata: first\n\n" {
		t.Fatalf("first block of /keep: %q, %v", first, err)
	}
	got, err := readBody(get("/reset"))
	if err == nil || !strings.Contains(err.Error(), "INTERNAL_ERROR") {
		t.Fatalf("the reset stream ended with %v, want an RST_STREAM", err)
	}
	if want := threeEvents[:strings.Index(threeEvents, "\n\n")+2]; got != want {
		t.Errorf("before the reset: %q, want %q", got, want)
	}

	close(release)
	rest, err := io.ReadAll(kr)
	if err != nil || string(rest) != "id: k2\ndata: second\n\n" {
		t.Fatalf("the stream beside the reset one: %q, %v", rest, err)
	}
	body, err = readBody(get("/mcp"))
	if err != nil || body != threeEvents {
		t.Fatalf("after the reset: %q, %v", body, err)
	}

	if n := ln.n.Load(); n != 1 {
		t.Errorf("fray accepted %d connections, want the one: a reset closed it", n)
	}
	if n := upConns.Load(); n != 1 {
		t.Errorf("the upstream saw %d connections, want one: cancelling a stream closed it", n)
	}
	for _, path := range []string{"/mcp", "/keep", "/reset"} {
		if v, _ := upProtos.Load(path); v != "HTTP/2.0" {
			t.Errorf("the upstream saw %s over %v, want HTTP/2.0", path, v)
		}
	}
}

// readBlock reads one SSE block ending in an empty LF line.
func readBlock(r *bufio.Reader) (string, error) {
	var b strings.Builder
	for {
		line, err := r.ReadString('\n')
		b.WriteString(line)
		if err != nil || line == "\n" {
			return b.String(), err
		}
	}
}

// h2Upstream starts an HTTP/2 upstream over TLS serving up, its
// connections reported to connState when that is set, and returns its URL
// and the transport fray reaches it with, as `fray proxy` makes it.
func h2Upstream(t *testing.T, up http.Handler, connState func(net.Conn, http.ConnState)) (string, *http.Transport) {
	t.Helper()
	srv := httptest.NewUnstartedServer(up)
	srv.EnableHTTP2 = true
	srv.Config.ConnState = connState
	srv.StartTLS()
	t.Cleanup(srv.Close)
	upPool := x509.NewCertPool()
	upPool.AddCert(srv.Certificate())
	tr := forward.NewTransport(&tls.Config{RootCAs: upPool})
	t.Cleanup(tr.CloseIdleConnections)
	return srv.URL, tr
}

// h2Serve serves h over TLS on ln, as `fray proxy --tls-cert` does, and
// returns an HTTP/2 client of it and its base URL.
func h2Serve(t *testing.T, ln net.Listener, h http.Handler) (*http.Client, string) {
	t.Helper()
	serverTLS, pool := testTLS(t)
	addr := serveOn(t, ln, h, serverTLS)
	ctr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
	t.Cleanup(ctr.CloseIdleConnections)
	return &http.Client{Transport: ctr, Timeout: 20 * time.Second}, "https://" + addr
}

// h2Fray starts an HTTP/2 upstream serving up, and fray with opts in
// front of it over TLS, and returns an HTTP/2 client of fray and fray's
// base URL.
func h2Fray(t *testing.T, up http.Handler, opts forward.Options) (*http.Client, string) {
	t.Helper()
	upURL, tr := h2Upstream(t, up, nil)
	opts.Transport = tr
	return h2Serve(t, listen(t), newProxy(t, upURL, opts))
}

// streamsUntilGone answers every request with an event stream of three
// events (the legacy path's first one an endpoint), then holds it open
// until the request ends.
func streamsUntilGone(w http.ResponseWriter, r *http.Request) {
	sseHeader(w)
	first := "id: 0\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n"
	if r.URL.Path == "/sse" {
		first = "event: endpoint\ndata: /messages?sessionId=s1\n\n"
	}
	writePieces(w, first, "id: 1\ndata: {}\n\n", "id: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
	<-r.Context().Done()
}

// TestHTTP2ResetIsObserved: a reset on an HTTP/2 stream, of each stream
// kind, at the stream's start and at an event, resets the client's stream
// and is observed as on HTTP/1.1: the firing, the event it cut, the end
// "fault-reset", and the fault's counter.
func TestHTTP2ResetIsObserved(t *testing.T) {
	checkNoLeaks(t)
	for _, kind := range []string{"post", "get", "resume", "legacy"} {
		for _, after := range []int{0, 1} {
			t.Run(kind+"/after_events="+string(rune('0'+after)), func(t *testing.T) {
				active := activeProfile(t, "reset",
					"[[fault]]\nkind = \"reset\"\nstream = \""+kind+"\"\nafter_events = "+string(rune('0'+after))+"\n")
				rec := &recorder{}
				client, base := h2Fray(t, http.HandlerFunc(streamsUntilGone), forward.Options{Faults: active, Observer: rec})
				req := must(http.NewRequest("GET", base+"/mcp", nil)) // the get stream's
				switch kind {
				case "post":
					req = must(http.NewRequest("POST", base+"/mcp",
						strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)))
					req.Header.Set("Content-Type", "application/json")
				case "resume":
					req.Header.Set("Last-Event-ID", "1")
				case "legacy":
					req = must(http.NewRequest("GET", base+"/sse", nil))
				}
				req.Header.Set("Accept", "application/json, text/event-stream")
				resp := do(t, client, req)
				_, err := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.ProtoMajor != 2 || err == nil || !strings.Contains(err.Error(), "INTERNAL_ERROR") {
					t.Fatalf("%s, body ended with %v; want an HTTP/2 stream reset", resp.Proto, err)
				}
				lines := rec.all()
				all := strings.Join(lines, "\n")
				if len(lines) == 0 || lines[len(lines)-1] != "end fault-reset msgs=[]" {
					t.Errorf("the last observation is not the end by a reset:\n%s", all)
				}
				fired := 0
				for _, l := range lines {
					if strings.Contains(l, "fired=[{0 reset}]") {
						fired++
						if after > 0 && !(strings.HasPrefix(l, "event 1 ") && strings.Contains(l, " cut ")) {
							t.Errorf("the reset fired on %q, want the event it cut, event 1", l)
						}
					}
				}
				if fired != 1 {
					t.Errorf("the reset was observed firing %d times, want once:\n%s", fired, all)
				}
				if n := active.Stats()[0].Fired; n != 1 {
					t.Errorf("the fault's counter says %d, want 1", n)
				}
			})
		}
	}
}

// TestHTTP2UpstreamBackPressure: over an HTTP/2 upstream, clients that
// never read make fray hold little per stream: it reads from the upstream
// no faster than the client takes, and HTTP/2 flow control stops the
// upstream, as TCP does over HTTP/1.1. 20 such streams, each upstream
// writing until a write blocks for a second; fray's heap may grow by
// less than 512 KiB a stream (the upstream's own buffers included).
func TestHTTP2UpstreamBackPressure(t *testing.T) {
	checkNoLeaks(t)
	const streams = 20
	chunk := []byte("data: " + strings.Repeat("z", 16<<10-8) + "\n\n")
	blocked := make(chan int64, streams)
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sseHeader(w)
		written, _ := writeUntilBlocked(w, chunk, 64<<20)
		blocked <- written
		<-r.Context().Done()
	})
	upURL, tr := h2Upstream(t, up, nil)
	fray, _ := front(t, upURL, func(o *proxyOptions) { o.Transport = tr })
	addr := strings.TrimPrefix(fray, "http://")

	before := liveHeap()
	for range streams {
		dialSend(t, addr, "GET /flood HTTP/1.1\r\nHost: x\r\n\r\n")
	}
	var total int64
	for range streams {
		select {
		case n := <-blocked:
			total += n
		case <-time.After(60 * time.Second):
			t.Fatal("an upstream stream never blocked")
		}
	}
	grown := liveHeap() - before
	t.Logf("%d streams: the upstream wrote %d KiB a stream before blocking; fray's heap grew %d KiB a stream",
		streams, total/streams>>10, grown/streams>>10)
	if total >= streams*64<<20 {
		t.Fatalf("the upstream was never held back")
	}
	if grown/streams > 512<<10 {
		t.Errorf("fray's heap grew by %d KiB a stream; it buffers what the client does not take", grown/streams>>10)
	}
}

// liveHeap returns the bytes of live heap objects after a collection.
func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
