package engine

import (
	"context"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/checks"
	"github.com/frayproxy/fray/internal/scripted"
	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy/report"
)

// TestIdleCutEndToEnd runs the idle cutter with a short silence against a
// server whose tool works in long silences: every answer stream, and every
// resumption, is cut when it falls silent. A client that resumes with
// Last-Event-ID gets every call through and the run passes, the cuts never
// held against the server; one that resumes without it is named.
func TestIdleCutEndToEnd(t *testing.T) {
	prof, err := profiles.Parse("idle.toml", strings.NewReader(`name = "idle"
[[fault]]
kind = "idle-close"
stream = ["post", "resume"]
silence = "150ms"
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		client scripted.ClientFault
		want   string // the check that names the client, "" for a pass
	}{
		{"a correct client", scripted.ClientCorrect, ""},
		{"a client without Last-Event-ID", scripted.NoLastEventID, checks.ClientLastEventID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			up := httptest.NewServer(scripted.NewServer(scripted.ServerOptions{Steps: 2, Interval: 400 * time.Millisecond}))
			defer up.Close()
			u, _ := url.Parse(up.URL)
			eng, err := New(Options{Upstream: u, Profile: prof})
			if err != nil {
				t.Fatal(err)
			}
			fray := httptest.NewServer(eng.Handler())
			defer fray.Close()
			res, cerr := scripted.RunClient(ctx, scripted.ClientOptions{URL: fray.URL + "/mcp", Calls: 1, Fault: tc.client, MaxAttempts: 10, Idle: 2 * time.Second, CallTimeout: 4 * time.Second})
			eng.Wait(ctx, true)
			r, err := eng.Finish(eng.Stop(), nil)
			if err != nil {
				t.Fatal(err)
			}
			// The correct client's resumptions are cut too; the other's GET
			// without Last-Event-ID is no resumption.
			if n := faultCount(r, "idle-close"); n < 1 || tc.want == "" && n < 2 {
				t.Fatalf("idle-close fired %d times, want the answer stream (and, resumed, the resumption) cut", n)
			}
			var found []string
			for _, c := range r.Checks {
				if c.Count > 0 && !strings.HasPrefix(c.ID, "e2e.") {
					found = append(found, c.ID)
				}
			}
			switch {
			case tc.want == "" && (cerr != nil || r.Verdict != report.VerdictPass || len(found) > 0):
				t.Errorf("client %v (%+v), verdict %s (%s), findings %v; want every call through and a pass", cerr, res, r.Verdict, r.Why, found)
			case tc.want != "" && strings.Join(found, ",") != tc.want:
				t.Errorf("findings %v, want %s alone", found, tc.want)
			}
		})
	}
}
