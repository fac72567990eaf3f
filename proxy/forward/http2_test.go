package forward_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

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
		resp, err := client.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
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
