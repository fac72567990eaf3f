package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestAdminWithoutProfile: --admin without --profile serves the API over
// an empty profile, so /metrics works and a profile can be put in later.
func TestAdminWithoutProfile(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	up := sseUpstream(t)
	f := launch(t, ctx, "proxy", "--upstream", up.URL, "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--quiet", "--allow-inconclusive")
	var admin string
	for admin == "" {
		if rest, ok := strings.CutPrefix(f.line(), "fray: admin API on "); ok {
			admin = strings.Fields(rest)[0]
		}
	}
	f.tail()
	for _, path := range []string{"/metrics", "/profile"} {
		if code, body := get(t, admin+path); code != http.StatusOK {
			t.Errorf("GET %s: %d %s", path, code, body)
		}
	}
	if code := f.stop(); code != exitOK {
		t.Errorf("exit %d", code)
	}
}
