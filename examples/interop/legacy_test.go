package interop_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestLegacySSEThroughFray runs the TypeScript SDK's 2024-11-05 HTTP+SSE
// pair through fray. Besides the client's own check (add(2, 3) == 5), the
// message POSTs must have reached the server through fray, which holds only
// if the endpoint event's URL led the client back to fray.
func TestLegacySSEThroughFray(t *testing.T) {
	env := requireNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := env.Start(ctx, t, "legacy-server.mjs")
	origin, path := splitURL(t, s.URL)
	frayURL, fray := startFray(t, origin)

	stdout, stderr, err := env.Run(ctx, "legacy-client.mjs", frayURL+path, "--timeout", "20000")
	line := lastJSONLine(stdout)
	var run struct {
		OK       bool   `json:"ok"`
		Error    string `json:"error"`
		Result   string `json:"result"`
		Requests []struct {
			URL    string `json:"url"`
			Method string `json:"method"`
			Status int    `json:"status"`
		} `json:"requests"`
	}
	if jerr := json.Unmarshal([]byte(line), &run); jerr != nil {
		t.Fatalf("client output is not a JSON summary (%v; exit: %v)\nstdout:\n%s\nstderr:\n%s", jerr, err, stdout, stderr)
	}
	t.Logf("legacy client: %s", line)
	if err != nil || !run.OK {
		t.Fatalf("legacy client failed through fray: %v %s\nstderr:\n%s\nexchanges at fray:\n%s", err, run.Error, stderr, fray)
	}

	fu, _ := url.Parse(frayURL)
	posts := 0
	for _, r := range run.Requests {
		u, err := url.Parse(r.URL)
		if err != nil {
			t.Fatalf("client request URL %q: %v", r.URL, err)
		}
		if u.Host != fu.Host {
			t.Errorf("client sent %s %s past fray (fray is %s)", r.Method, r.URL, fu.Host)
		}
		if r.Method == http.MethodPost {
			posts++
		}
	}
	var sseOK, postsAtFray int
	for _, ex := range fray.exchanges() {
		switch {
		case ex.Method == http.MethodGet && ex.Path == path && ex.Status == http.StatusOK:
			sseOK++
		case ex.Method == http.MethodPost && strings.HasPrefix(ex.Path, "/messages?"):
			// The answer to the last POST travels on the SSE stream and may
			// beat the POST's own 202, so the client can hang up on the POST
			// before fray answers it; a status is required only if one was
			// written.
			postsAtFray++
			if ex.Status != 0 && ex.Status != http.StatusAccepted {
				t.Errorf("fray answered %s with %d, want 202", ex.Path, ex.Status)
			}
		}
	}
	if sseOK != 1 || postsAtFray == 0 || postsAtFray != posts {
		t.Errorf("at fray: %d SSE GETs answered 200 (want 1), %d message POSTs (client sent %d)\nexchanges at fray:\n%s", sseOK, postsAtFray, posts, fray)
	}
}
