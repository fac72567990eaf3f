package forward_test

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/frayproxy/fray/proxy/forward"
)

// TestForwardsEveryMethodUnderTheBasePath checks the request a server sees
// through fray: path and query under the upstream's base, the MCP headers
// untouched, the hop-by-hop ones gone, and a Via added as RFC 9110 asks.
func TestForwardsEveryMethodUnderTheBasePath(t *testing.T) {
	checkNoLeaks(t)
	type seen struct {
		method, path, rawQuery, body string
		header                       http.Header
	}
	got := make(chan seen, 1)
	up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.URL.Path, r.URL.RawQuery, string(b), r.Header.Clone()}
		w.Header().Set("X-Answer", "yes")
		w.Header().Set("Mcp-Session-Id", "s-1")
		w.WriteHeader(http.StatusTeapot)
		_, _ = io.WriteString(w, "answer")
	})
	fray, _ := front(t, up+"/base")

	for _, method := range []string{"GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"} {
		t.Run(method, func(t *testing.T) {
			resp, body := roundTrip(t, method, fray+"/mcp/x?a=1&b=%20two", "hello", map[string]string{
				"Mcp-Session-Id": "sess-42", "MCP-Protocol-Version": "2025-11-25", "Last-Event-ID": "ev-7",
				"Authorization": "Bearer secret", "Connection": "X-Hop", "X-Hop": "1",
				"Keep-Alive": "timeout=5", "Proxy-Authorization": "Basic x",
			})
			if resp.StatusCode != http.StatusTeapot || body != "answer" || resp.Header.Get("X-Answer") != "yes" ||
				resp.Header.Get("Mcp-Session-Id") != "s-1" {
				t.Fatalf("client got %d %q %v", resp.StatusCode, body, resp.Header)
			}
			s := <-got
			if s.method != method || s.path != "/base/mcp/x" || s.rawQuery != "a=1&b=%20two" {
				t.Errorf("upstream saw %s %s?%s", s.method, s.path, s.rawQuery)
			}
			if method != "GET" && method != "OPTIONS" && s.body != "hello" {
				t.Errorf("upstream body %q", s.body)
			}
			for k, want := range map[string]string{
				"Mcp-Session-Id": "sess-42", "Mcp-Protocol-Version": "2025-11-25",
				"Last-Event-Id": "ev-7", "Authorization": "Bearer secret",
			} {
				if v := s.header.Get(k); v != want {
					t.Errorf("upstream %s = %q, want %q", k, v, want)
				}
			}
			for _, k := range []string{"X-Hop", "Keep-Alive", "Proxy-Authorization"} {
				if v := s.header.Get(k); v != "" {
					t.Errorf("hop-by-hop %s forwarded as %q", k, v)
				}
			}
			if v := s.header.Get("Via"); !regexp.MustCompile(`^1\.1 fray-[0-9a-f]{8}$`).MatchString(v) {
				t.Errorf("Via = %q, want 1.1 fray-ID", v)
			}
		})
	}
}

// TestRootMapsToTheBasePath: with --upstream http://h/mcp, fray's "/" is the
// server's "/mcp", not "/mcp/" (which many servers do not route).
func TestRootMapsToTheBasePath(t *testing.T) {
	up, paths := recordingUpstream(t, urlPath)
	fray, _ := front(t, up+"/mcp")
	for client, want := range map[string]string{"/": "/mcp", "/sub": "/mcp/sub"} {
		resp := get(t, fray+client)
		resp.Body.Close()
		if got := <-paths; got != want {
			t.Errorf("client %s reached upstream %s, want %s", client, got, want)
		}
	}
}

// TestUnreachableUpstreamIs502 checks the answer and the log line when
// nothing listens at the upstream.
func TestUnreachableUpstreamIs502(t *testing.T) {
	checkNoLeaks(t)
	dead := "http://" + deadAddr(t)
	fray, logs := front(t, dead)
	resp := post(t, fray+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	body, _ := readBody(resp)
	if resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("status %d, want 502", resp.StatusCode)
	}
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "fray: upstream "+dead) || !strings.Contains(lines[0], "refused") {
		t.Fatalf("502 body %q: want one line naming the upstream and the error", body)
	}
	recs := logs.find("upstream failed")
	if len(recs) != 1 || recs[0]["upstream"] != dead || !strings.Contains(recs[0]["error"], "refused") {
		t.Fatalf("log: %v\n%s", recs, logs.text())
	}
}

// TestRequestBodyLimit: a POST larger than the limit is refused with 413
// and never forwarded.
func TestRequestBodyLimit(t *testing.T) {
	up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("oversized body reached the upstream")
	})
	fray, _ := front(t, up, func(o *proxyOptions) { o.MaxRequestBody = 1000 })
	resp := post(t, fray+"/mcp", strings.Repeat("x", 1001))
	body, _ := readBody(resp)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body, "1000 bytes") {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
}

// TestHostHeader: a Host naming fray is replaced by the upstream's, as a
// direct client would have sent; any other Host (a DNS-rebinding attempt)
// reaches the server as sent, so the server's own Host checks still apply.
func TestHostHeader(t *testing.T) {
	up, hosts := recordingUpstream(t, func(r *http.Request) string { return r.Host })
	fray, _ := front(t, up)
	frayPort := fray[strings.LastIndexByte(fray, ':'):]
	for sent, want := range map[string]string{
		"":                            strings.TrimPrefix(up, "http://"),
		"localhost" + frayPort:        strings.TrimPrefix(up, "http://"),
		"evil.example.com":            "evil.example.com",
		"evil.example.com" + frayPort: "evil.example.com" + frayPort,
	} {
		req, _ := http.NewRequest("GET", fray+"/mcp", nil)
		if sent != "" {
			req.Host = sent
		}
		resp := do(t, http.DefaultClient, req)
		resp.Body.Close()
		if got := <-hosts; got != want {
			t.Errorf("client Host %q reached the server as %q, want %q", sent, got, want)
		}
	}
}

// TestLoopIsRefused: fray whose upstream is fray itself refuses the
// request that comes back to it with 508 and a one-line reason, instead of
// forwarding it round and round; a request that went through another fray
// first is forwarded.
func TestLoopIsRefused(t *testing.T) {
	ln := listen(t)
	self := "http://" + ln.Addr().String()
	serveOn(t, ln, newProxy(t, self, forward.Options{}), nil)
	resp := post(t, self+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	body, _ := readBody(resp)
	if resp.StatusCode != http.StatusLoopDetected || !strings.Contains(body, "loop detected") {
		t.Errorf("a request fray sent itself: %s %q, want 508 saying so", resp.Status, body)
	}

	var seen atomic.Int32
	base, _ := front(t, upServer(t, func(w http.ResponseWriter, r *http.Request) { seen.Add(1) }))
	resp, _ = roundTrip(t, http.MethodGet, base+"/health", "", map[string]string{"Via": "1.1 fray-0123abcd, 1.1 other"})
	if resp.StatusCode != http.StatusOK || seen.Load() != 1 {
		t.Errorf("a request through another fray: %s, upstream saw %d", resp.Status, seen.Load())
	}
}

// TestUpstreamNotes: a client path that repeats the upstream's base path
// is warned about once, and the upstream's first error status is logged at
// info with the URL fray requested, once.
func TestUpstreamNotes(t *testing.T) {
	up := upServer(t, http.NotFound)
	base, rec := front(t, up+"/mcp")
	for range 2 {
		resp := get(t, base+"/mcp?sessionId=secret")
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	doubled := rec.find("the client's path already begins with the upstream's base path, which fray puts in front of it; point the client at fray's / or give the upstream without the path")
	if len(doubled) != 1 || doubled[0]["level"] != "WARN" || doubled[0]["forwarded_path"] != "/mcp/mcp" {
		t.Errorf("doubled-path warnings %v; log:\n%s", doubled, rec.text())
	}
	notes := rec.find("the upstream answered with an error status (first time; later ones are not logged at info)")
	if len(notes) != 1 || notes[0]["level"] != "INFO" || notes[0]["status"] != "404" ||
		notes[0]["requested"] != up+"/mcp/mcp?sessionId=redacted" {
		t.Errorf("error-status notes %v; log:\n%s", notes, rec.text())
	}
	if strings.Contains(rec.text(), "secret") {
		t.Errorf("a query value reached the log:\n%s", rec.text())
	}
}
