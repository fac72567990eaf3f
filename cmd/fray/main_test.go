package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestProxyCommandServes starts `fray proxy` as a user would, reads the one
// start line, sends a request through, and stops it.
func TestProxyCommandServes(t *testing.T) {
	up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "pong "+r.URL.Path)
	}))
	f := launch(t, context.Background(), "proxy", "--upstream", up.URL, "--listen", "127.0.0.1:0", "--allow-inconclusive")
	line, hint := f.line(), f.line()
	f.tail()
	// fray: proxying http://127.0.0.1:PORT -> UPSTREAM
	fields := strings.Fields(line)
	if len(fields) != 5 || fields[1] != "proxying" || fields[4] != up.URL {
		t.Fatalf("start line %q", line)
	}
	// The next line says which URL the client should use.
	if want := "fray: point clients at " + fields[2] + "/PATH for the server's " + up.URL + "/PATH"; !strings.HasPrefix(hint, want) {
		t.Errorf("second line %q, want it to begin %q", hint, want)
	}
	if _, body := get(t, fields[2]+"/mcp"); body != "pong /mcp" {
		t.Fatalf("through fray: %q", body)
	}
	if code := f.stop(); code != 0 {
		t.Fatalf("exit %d after shutdown", code)
	}
}

// TestClientHint: the URL fray tells clients to use is the upstream's
// with fray's address, the path kept.
func TestClientHint(t *testing.T) {
	for _, tc := range []struct{ upstream, want string }{
		{"http://127.0.0.1:3000", "point clients at http://127.0.0.1:7070/PATH for the server's http://127.0.0.1:3000/PATH (e.g. http://127.0.0.1:7070/mcp)"},
		{"http://127.0.0.1:3000/", "point clients at http://127.0.0.1:7070/PATH for the server's http://127.0.0.1:3000/PATH (e.g. http://127.0.0.1:7070/mcp)"},
		{"http://127.0.0.1:3000/mcp", "point clients at http://127.0.0.1:7070/mcp for the server's http://127.0.0.1:3000/mcp (every path goes to the same path on the server)"},
		{"http://127.0.0.1:3000/mcp?x=1", "point clients at http://127.0.0.1:7070/mcp?x=1 for the server's http://127.0.0.1:3000/mcp?x=1 (every path goes to the same path on the server)"},
	} {
		if got := clientHint("http://127.0.0.1:7070", tc.upstream); got != tc.want {
			t.Errorf("clientHint(%q) = %q, want %q", tc.upstream, got, tc.want)
		}
	}
}
