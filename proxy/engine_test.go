package proxy

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// newEngine builds an engine with opts in front of upstream.
func newEngine(t *testing.T, upstream string, opts Options) *Engine {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	opts.Upstream = u
	eng, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return eng
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

// serveEngine serves eng on a loopback port, with Serve's contexts made
// from serveCtx and drainCtx, and returns its base URL, a stop that
// cancels the serving context, and what Serve returns.
func serveEngine(t *testing.T, serveCtx, drainCtx context.Context, eng *Engine) (string, context.CancelFunc, <-chan Stopped) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveCtx, stop := context.WithCancel(serveCtx)
	done := make(chan Stopped, 1)
	go func() { done <- eng.Serve(serveCtx, drainCtx, ln, nil) }()
	return "http://" + ln.Addr().String(), stop, done
}

// postAnswer is what a client read of an answer, and the error that ended it.
type postAnswer struct {
	body string
	err  error
}

// postCall sends a tools/call to the engine at base and yields the answer
// once it has been read to its end.
func postCall(ctx context.Context, base string) <-chan postAnswer {
	out := make(chan postAnswer, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/mcp",
			strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			out <- postAnswer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		out <- postAnswer{string(b), err}
	}()
	return out
}

// TestEngineShutdown stops an engine with a POST in flight and a
// standalone GET stream open: the POST gets the drain to finish and its
// client the whole answer; the GET stream, which never ends by itself, is
// ended by fray cleanly (a clean end of the body, not a reset), and none
// of fray's own ending reaches the observers.
func TestEngineShutdown(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	release := make(chan struct{})
	postArrived := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		if r.Method == http.MethodPost {
			io.WriteString(w, "id: 1\ndata: \n\n")
			w.(http.Flusher).Flush()
			close(postArrived)
			<-release
			io.WriteString(w, "id: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
			return
		}
		io.WriteString(w, ": ok\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer up.Close()
	defer up.CloseClientConnections()

	// Which exchanges' ends the observers saw, by stream type.
	var postEnds, getEnds atomic.Int64
	watch := observe.Func(func(o *observe.Observation) {
		if o.Kind != observe.KindEnd {
			return
		}
		switch o.Stream {
		case mcp.StreamPost:
			postEnds.Add(1)
		case mcp.StreamGet:
			getEnds.Add(1)
		}
	})
	eng := newEngine(t, up.URL, Options{Watch: watch, Drain: 10 * time.Second})
	shutdownBegan := make(chan struct{})
	eng.onShutdown = func() { close(shutdownBegan) }
	base, stop, done := serveEngine(t, ctx, ctx, eng)

	// The standalone stream, open until fray ends it.
	get := newReq(t, http.MethodGet, base+"/mcp", "", map[string]string{"Accept": "text/event-stream"})
	getResp := do(t, http.DefaultClient, get.WithContext(ctx))
	defer getResp.Body.Close()
	if line, err := bufio.NewReader(getResp.Body).ReadString('\n'); err != nil || line != ": ok\n" {
		t.Fatalf("standalone stream began %q, %v", line, err)
	}

	// The POST, held by the upstream until shutdown has begun.
	post := postCall(ctx, base)
	<-postArrived
	stop()
	<-shutdownBegan
	close(release)

	if got := <-post; got.err != nil || !strings.Contains(got.body, `"result":{}`) {
		t.Errorf("the POST in flight at shutdown got %q, %v; want its whole answer", got.body, got.err)
	}
	// The standalone stream ends cleanly: EOF, not an error.
	if _, err := io.Copy(io.Discard, getResp.Body); err != nil {
		t.Errorf("the standalone stream ended with %v, want a clean end", err)
	}
	var st Stopped
	select {
	case st = <-done:
	case <-ctx.Done():
		t.Fatal("serve did not return")
	}
	if st.Err != nil {
		t.Errorf("serve: %v", st.Err)
	}
	if !st.Drained || st.Open != 1 {
		t.Errorf("drained=%v open=%d, want true and 1 (the standalone stream)", st.Drained, st.Open)
	}
	if st.At <= 0 {
		t.Errorf("cut at %v", st.At)
	}
	// The POST ended during the drain, the peers' doing: observed. The
	// standalone stream was ended by fray after the cut: not observed.
	if n := postEnds.Load(); n != 1 {
		t.Errorf("observers saw %d ends of the POST, want 1", n)
	}
	if n := getEnds.Load(); n != 0 {
		t.Errorf("observers saw %d ends of the standalone stream fray ended, want 0", n)
	}
	if _, err := net.Dial("tcp", strings.TrimPrefix(base, "http://")); err == nil {
		t.Error("fray still accepts connections after shutdown")
	}
}

// TestEngineShutdownNotDrained: an exchange that outlasts the drain is
// ended by fray, and the stop says so, so that the final report does not
// judge what it still owed.
func TestEngineShutdownNotDrained(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	arrived := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: 1\ndata: \n\n")
		w.(http.Flusher).Flush()
		close(arrived)
		<-r.Context().Done()
	}))
	defer up.Close()
	defer up.CloseClientConnections()
	eng := newEngine(t, up.URL, Options{Drain: 50 * time.Millisecond})
	base, stop, done := serveEngine(t, ctx, ctx, eng)
	post := postCall(ctx, base)
	<-arrived
	stop()
	st := <-done
	if st.Drained || st.Open != 1 {
		t.Errorf("drained=%v open=%d, want false and 1", st.Drained, st.Open)
	}
	if got := <-post; got.err != nil {
		t.Errorf("the client saw %v, want a clean end of the stream", got.err)
	}
	r, err := eng.Finish(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Schema == 0 || r.Verdict == "" {
		t.Errorf("final report %+v", r)
	}
}
