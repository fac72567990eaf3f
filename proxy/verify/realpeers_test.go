package verify_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/frayproxy/fray/examples/gosdk/refpeer"
	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/forward"
	"github.com/frayproxy/fray/proxy/report"
	"github.com/frayproxy/fray/proxy/verify"
)

// TestRealGoPeersPass runs the official Go SDK's client and server (the
// reference pair) through fray with a Verifier observing, with and
// without fault profiles, and checks that a conforming pair gets no
// error-level finding: the verifier blames neither end for what fray did.
// Each case also says which checks it must have applied, so that a pass
// is not a pass by default.
func TestRealGoPeersPass(t *testing.T) {
	never, three := 0, 3
	tests := []struct {
		name       string
		profile    string
		closeAfter *int
		applied    []string
	}{
		{"server closes its stream", "", &three, []string{
			checks.ServerPrimingEvent, checks.ServerRetryBeforeClose, checks.ServerReplayComplete,
			checks.ClientReconnects, checks.ClientLastEventID, checks.ClientRetryHonoured,
			checks.E2EEveryRequestAnswered, checks.E2ENoMessageLost}},
		{"polling-server", "polling-server", &never, []string{
			checks.ServerPrimingEvent, checks.ServerReplayComplete, checks.ClientReconnects,
			checks.ClientLastEventID, checks.E2EEveryRequestAnswered}},
		{"lossy-resume", "lossy-resume", &never, []string{
			checks.ServerPrimingEvent, checks.E2EEveryRequestAnswered, checks.E2ENoMessageLost}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			mux := http.NewServeMux()
			mux.Handle("/mcp", refpeer.NewHandler(refpeer.ServerOptions{}))
			up := httptest.NewServer(mux)
			defer up.Close()
			u, _ := url.Parse(up.URL)

			v := verify.New(verify.Options{Profile: tt.profile})
			opts := forward.Options{Upstream: u, Observer: v}
			if tt.profile != "" {
				prof, err := profiles.Builtin(tt.profile)
				if err != nil {
					t.Fatal(err)
				}
				plan, err := profiles.NewActive(prof, nil)
				if err != nil {
					t.Fatal(err)
				}
				opts.Faults = faults.Plan(plan)
			}
			p, err := forward.New(opts)
			if err != nil {
				t.Fatal(err)
			}
			fray := httptest.NewServer(p)
			res, err := refpeer.RunClient(ctx, refpeer.ClientOptions{Endpoint: fray.URL + "/mcp", CloseAfter: tt.closeAfter, Count: 8})
			if err != nil {
				t.Fatalf("the reference client failed through fray: %v", err)
			}
			fray.CloseClientConnections()
			fray.Close()
			r := v.Final(0)
			for _, c := range r.Checks {
				for _, e := range c.Evidence {
					t.Logf("%s (%s): %s %+v", c.ID, c.Status, e.Message, e)
				}
			}
			if r.Verdict != report.VerdictPass {
				t.Errorf("verdict %s for a conforming pair (resumptions %v)", r.Verdict, res.Resumptions)
			}
			for _, id := range tt.applied {
				var c report.Check
				for _, cc := range r.Checks {
					if cc.ID == id {
						c = cc
					}
				}
				if c.Applied == 0 || c.Status == report.StatusFail {
					t.Errorf("%s: status %s, applied %d; excused %+v", id, c.Status, c.Applied, c.Excused)
				}
			}
		})
	}
}
