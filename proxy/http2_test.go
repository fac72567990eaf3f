package proxy

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// resetEveryStream resets each kind of stream at its second event.
const resetEveryStream = `name = "reset-everything"
[[fault]]
kind = "reset"
stream = ["post", "get", "resume"]
after_events = 1
`

// TestResetIsObservedOverHTTP2: fray's own reset of an HTTP/2 client
// stream, where the connection cannot be taken over, is recorded like the
// HTTP/1.1 one, for every kind of stream and whatever the upstream speaks:
// the firing, the event it cut and the stream's end by a fault reach the
// observers, the report counts the fault, and no check blames a peer.
func TestResetIsObservedOverHTTP2(t *testing.T) {
	prof, err := profiles.Parse("reset.toml", strings.NewReader(resetEveryStream))
	if err != nil {
		t.Fatal(err)
	}
	for _, upH2 := range []bool{false, true} {
		t.Run(fmt.Sprintf("h2 upstream %v", upH2), func(t *testing.T) {
			// The POST stream's events are p1..p3, the standalone stream's
			// g1..g3; a resumption from p1 replays p2 and p3.
			up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				note := "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n"
				answer := "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"
				switch {
				case r.Method == http.MethodPost:
					io.WriteString(w, "id: p1\ndata: \n\nid: p2\n"+note+"id: p3\n"+answer)
				case r.Header.Get("Last-Event-ID") == "p1":
					io.WriteString(w, "id: p2\n"+note+"id: p3\n"+answer)
				default:
					io.WriteString(w, "id: g1\ndata: \n\nid: g2\n"+note+"id: g3\n"+note)
				}
			}))
			opts := Options{Profile: prof}
			if upH2 {
				up.EnableHTTP2 = true
				up.StartTLS()
				pool := x509.NewCertPool()
				pool.AddCert(up.Certificate())
				opts.UpstreamTLS = &tls.Config{RootCAs: pool}
			} else {
				up.Start()
			}
			defer up.Close()

			var mu sync.Mutex
			seen := map[mcp.StreamType][]string{}
			opts.Watch = observe.Func(func(o *observe.Observation) {
				mu.Lock()
				defer mu.Unlock()
				for _, f := range o.Fired {
					seen[o.Stream] = append(seen[o.Stream], "fired "+f.Kind)
				}
				if o.Event != nil && o.Event.Fate == observe.Cut {
					seen[o.Stream] = append(seen[o.Stream], fmt.Sprintf("cut event %d", o.Event.Index))
				}
				if o.End != nil {
					seen[o.Stream] = append(seen[o.Stream], "end "+o.End.Cause.String())
				}
			})
			eng := newEngine(t, up.URL, opts)
			fray, client := h2Front(t, eng)

			for _, req := range []*http.Request{
				newReq(t, http.MethodPost, fray.URL+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, nil),
				newReq(t, http.MethodGet, fray.URL+"/mcp", "", map[string]string{"Accept": "text/event-stream"}),
				newReq(t, http.MethodGet, fray.URL+"/mcp", "", map[string]string{"Accept": "text/event-stream", "Last-Event-ID": "p1"}),
			} {
				resp := do(t, client, req)
				if resp.ProtoMajor != 2 {
					t.Fatalf("the client got %s, want HTTP/2", resp.Proto)
				}
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
				if err == nil || !strings.Contains(err.Error(), "INTERNAL_ERROR") {
					t.Errorf("%s: the stream ended with %v, want an RST_STREAM", req.Method, err)
				}
			}
			r, err := eng.Finish(eng.Stop(), nil)
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			want := []string{"fired reset", "cut event 1", "end fault-reset"}
			for _, st := range []mcp.StreamType{mcp.StreamPost, mcp.StreamGet, mcp.StreamResume} {
				if got := strings.Join(seen[st], ", "); got != strings.Join(want, ", ") {
					t.Errorf("%s stream: observed %q, want %q", st, got, want)
				}
			}
			if n := faultCount(r, "reset"); n != 3 {
				t.Errorf("the report counts %d resets, want 3", n)
			}
			for _, c := range r.Checks {
				if c.Status == "fail" || c.Status == "warn" {
					t.Errorf("%s %s: %+v", c.ID, c.Status, c.Evidence)
				}
			}
		})
	}
}

func newReq(t *testing.T, method, url, body string, header map[string]string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return req
}

// h2Front serves eng's handler over TLS and HTTP/2 until the test ends,
// and returns the server and a client of it.
func h2Front(t *testing.T, eng *Engine) (*httptest.Server, *http.Client) {
	fray := httptest.NewUnstartedServer(eng.Handler())
	fray.EnableHTTP2 = true
	fray.StartTLS()
	t.Cleanup(fray.Close)
	return fray, fray.Client()
}
