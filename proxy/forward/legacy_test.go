package forward_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestLegacyEndpointIsRewritten: the 2024-11-05 endpoint event is rewritten
// so the client's POSTs come back through fray and reach the server's
// message endpoint, whatever form the server wrote the URL in.
func TestLegacyEndpointIsRewritten(t *testing.T) {
	checkNoLeaks(t)
	for _, tc := range []struct {
		name     string
		base     string // upstream base path
		endpoint func(upstream string) string
		want     func(fray string) string
		postPath string // what the upstream must see
	}{
		{"relative", "", func(string) string { return "/messages?sessionId=abc" },
			func(string) string { return "/messages?sessionId=abc" }, "/messages"},
		{"relative-no-slash", "", func(string) string { return "messages?session_id=abc&x=1" },
			func(string) string { return "/messages?session_id=abc&x=1" }, "/messages"},
		{"absolute", "", func(up string) string { return up + "/messages?sessionId=abc" },
			func(fray string) string { return fray + "/messages?sessionId=abc" }, "/messages"},
		{"under-base", "/api", func(string) string { return "/api/messages?sessionId=abc" },
			func(string) string { return "/messages?sessionId=abc" }, "/api/messages"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			posted := make(chan string, 1)
			var upURL string
			up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost {
					b, _ := io.ReadAll(r.Body)
					posted <- r.URL.Path + "?" + r.URL.RawQuery + " " + string(b)
					w.WriteHeader(http.StatusAccepted)
					return
				}
				sseHeader(w)
				writePieces(w, "event: endpoint\ndata: "+tc.endpoint(upURL)+"\n\n")
				<-r.Context().Done()
			})
			upURL = up
			fray, logs := front(t, up+tc.base)
			got := legacyEndpoint(t, fray)
			if want := tc.want(fray); got != want {
				t.Fatalf("endpoint %q, want %q", got, want)
			}
			target := got
			if strings.HasPrefix(target, "/") {
				target = fray + target
			}
			pr := post(t, target, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
			pr.Body.Close()
			if p := <-posted; !strings.HasPrefix(p, tc.postPath+"?") || !strings.HasSuffix(p, `"method":"ping"}`) {
				t.Fatalf("upstream got POST %q", p)
			}
			var legacyPost bool
			for _, rec := range logs.find("exchange") {
				if rec["method"] == "POST" && rec["stream"] == "legacy" && rec["rpc_method"] == "ping" {
					legacyPost = true
				}
			}
			if !legacyPost {
				t.Fatalf("the POST was not classified as legacy:\n%s", logs.text())
			}
		})
	}
}

// TestLegacyEndpointKeepsEscapes: the rewrite keeps the path as the server
// escaped it, so that "/%2F/evil.example/x" does not become
// "///evil.example/x", which a WHATWG parser (Node's) reads as a URL on
// evil.example; and a rewrite that would start with "//" is not made, with
// a warning.
func TestLegacyEndpointKeepsEscapes(t *testing.T) {
	checkNoLeaks(t)
	const warning = "legacy endpoint, relative to fray, would name another host (it starts with //); left as is"
	for _, tc := range []struct {
		name, base, endpoint, want string
		warned                     bool
	}{
		{"escaped slash", "", "/%2F/evil.example/x?sessionId=abc", "/%2F/evil.example/x?sessionId=abc", false},
		{"escaped under base", "/api", "/api/a%2Fb?sessionId=abc", "/a%2Fb?sessionId=abc", false},
		{"double slash under base", "/api", "/api//evil.example/x?sessionId=abc", "/api//evil.example/x?sessionId=abc", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
				sseHeader(w)
				writePieces(w, "event: endpoint\ndata: "+tc.endpoint+"\n\n")
				<-r.Context().Done()
			})
			fray, logs := front(t, up+tc.base)
			if got := legacyEndpoint(t, fray); got != tc.want {
				t.Errorf("endpoint %q, want %q", got, tc.want)
			}
			if warned := len(logs.find(warning)) > 0; warned != tc.warned {
				t.Errorf("warned %v, want %v:\n%s", warned, tc.warned, logs.text())
			}
		})
	}
}

// legacyEndpoint opens fray's legacy SSE stream, open until the test ends,
// and returns the URL its first event, the endpoint event, gives.
func legacyEndpoint(t *testing.T, fray string) string {
	t.Helper()
	resp := get(t, fray+"/sse")
	t.Cleanup(func() { resp.Body.Close() })
	br := firstLine(t, resp.Body, "event: endpoint\n")
	data, _ := br.ReadString('\n')
	return strings.TrimSuffix(strings.TrimPrefix(data, "data: "), "\n")
}
