package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestProxyCommandServes starts `fray proxy` as a user would, reads the one
// start line, sends a request through, and stops it.
func TestProxyCommandServes(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "pong "+r.URL.Path)
	}))
	defer up.Close()
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
