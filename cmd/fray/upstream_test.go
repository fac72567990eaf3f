package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestUpstreamBaseOrEndpoint: --upstream may be the server's base or its
// endpoint, in fray proxy as in fray run: a client path goes to the same
// path on the server either way, never doubled; and the upstream's first
// error status is logged at info with the URL fray requested.
func TestUpstreamBaseOrEndpoint(t *testing.T) {
	up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/mcp" {
			http.NotFound(w, r)
			return
		}
		_, _ = io.WriteString(w, "pong "+r.URL.Path)
	}))
	for _, upstream := range []string{up.URL, up.URL + "/", up.URL + "/mcp"} {
		t.Run(upstream, func(t *testing.T) {
			ctx := within(t, 20*time.Second)
			base, stop := startFray(t, ctx, "proxy", "--upstream", upstream, "--listen", "127.0.0.1:0", "--quiet", "--allow-inconclusive")
			if code, body := get(t, base+"/mcp"); code != http.StatusOK || body != "pong /mcp" {
				t.Errorf("GET /mcp through fray: %d %q", code, body)
			}
			if code, _ := get(t, base+"/nope"); code != http.StatusNotFound {
				t.Errorf("GET /nope through fray: %d", code)
			}
			_, _, stderr := stop()
			if want := `requested=` + up.URL + `/nope`; !strings.Contains(stderr, want) || !strings.Contains(stderr, "level=INFO") {
				t.Errorf("stderr does not log %q at info:\n%s", want, stderr)
			}
			if strings.Count(stderr, "the upstream answered with an error status") != 1 {
				t.Errorf("want one error-status line:\n%s", stderr)
			}
		})
	}
}
