package scripted_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/frayproxy/fray/examples/scripted"
	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy"
	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/report"
)

// dualServer serves both eras from one endpoint, as the official SDKs
// do: a request that names 2026-07-28 (header, or the _meta of its body)
// goes to the stateless server, anything else to the 2025-11-25 one.
// noGET answers every GET 405, as a server of 2026-07-28 answers an older
// client's standalone or resuming GET.
func dualServer(noGET bool) http.Handler {
	old := scripted.NewServer(scripted.ServerOptions{})
	stateless := scripted.NewStatelessServer(scripted.StatelessServerOptions{})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case mcp.Stateless(r.Header.Get(mcp.HeaderProtocol)):
			stateless.ServeHTTP(w, r)
		case noGET && r.Method == http.MethodGet:
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		default:
			old.ServeHTTP(w, r)
		}
	})
}

// eraRun runs the given clients at once through one fray in front of h.
func eraRun(t *testing.T, h http.Handler, prof *profiles.Profile, oldClient, newClient bool) (report.Report, error, error) {
	t.Helper()
	seed := uint64(1)
	var oldErr, newErr error
	rep := judge(t, h, proxy.Options{Profile: prof, Seed: &seed}, &report.Command{Args: []string{"scripted clients"}}, func(ctx context.Context, fray string) {
		var wg sync.WaitGroup
		if oldClient {
			wg.Go(func() {
				_, oldErr = scripted.RunClient(ctx, scripted.ClientOptions{URL: fray + "/mcp", Calls: 3})
			})
		}
		if newClient {
			wg.Go(func() {
				_, newErr = scripted.RunStatelessClient(ctx, scripted.StatelessClientOptions{URL: fray + "/mcp", Calls: 3})
			})
		}
		wg.Wait()
	})
	return rep, oldErr, newErr
}

// judgedBy reports how many cases each of the checks ids judged.
func judgedBy(rep report.Report, ids ...string) map[string]int {
	out := map[string]int{}
	for _, id := range ids {
		out[id] = applied(rep, id)
	}
	return out
}

// TestBothErasShareOneEndpoint: a 2025-11-25 client and a 2026-07-28 client
// at once, against one server that speaks both, under stateless-cut: each
// request is judged by its own revision's checks, and the correct pairs
// pass.
func TestBothErasShareOneEndpoint(t *testing.T) {
	prof, err := profiles.Resolve("stateless-cut")
	if err != nil {
		t.Fatal(err)
	}
	rep, oldErr, newErr := eraRun(t, dualServer(false), prof, true, true)
	if oldErr != nil || newErr != nil {
		t.Fatalf("clients failed: 2025-11-25 %v, 2026-07-28 %v", oldErr, newErr)
	}
	if got := found(rep); len(got) > 0 {
		t.Errorf("found %v\n%s", got, describe(rep))
	}
	j := judgedBy(rep, checks.ServerPrimingEvent, checks.ClientRoutingHeaders, checks.ServerListenAcknowledged)
	for id, n := range j {
		if n == 0 {
			t.Errorf("%s judged nothing: both eras went through fray", id)
		}
	}
	// Three calls and a listen of 2026-07-28 at least; every other
	// 2026-07-28 request is a re-issue or a listen again.
	if n := j[checks.ClientRoutingHeaders]; n < 4 {
		t.Errorf("client.routing-headers judged %d requests, want the 2026-07-28 ones only, at least 4", n)
	}
	if rep.Verdict != report.VerdictPass {
		t.Errorf("verdict %s (%s)", rep.Verdict, rep.Why)
	}
}

// TestOldClientNewServer: a 2025-11-25 client against a server that
// primes its streams but answers the resuming GET 405, as a 2026-07-28
// server answers an older client: the client that stops at the 405 has
// understood it (no stream to resume: not client.reconnects), the call
// it lost is the server's (e2e.every-request-answered, citing the 405),
// and none of the 2026-07-28 checks judges the old client, whose traffic
// names no such revision.
func TestOldClientNewServer(t *testing.T) {
	prof, err := profiles.Resolve("polling-server")
	if err != nil {
		t.Fatal(err)
	}
	rep, oldErr, _ := eraRun(t, dualServer(true), prof, true, false)
	if oldErr == nil {
		t.Error("the 2025-11-25 client finished every call, though its resumption was refused")
	}
	if got := found(rep); !slices.Equal(got, []string{checks.E2EEveryRequestAnswered}) {
		t.Errorf("found %v, want only e2e.every-request-answered\n%s", got, describe(rep))
	}
	for _, c := range rep.Checks {
		if c.ID == checks.E2EEveryRequestAnswered && len(c.Evidence) > 0 && !strings.Contains(c.Evidence[0].Message, "the server sent no response") {
			t.Errorf("the evidence does not say the server kept the answer: %s", c.Evidence[0].Message)
		}
	}
	for _, c := range rep.Checks {
		if isStateless(c.ID) && (c.Applied > 0 || c.Count > 0) {
			t.Errorf("%s judged 2025-11-25 traffic: %d cases, %d findings", c.ID, c.Applied, c.Count)
		}
	}
}

// TestNewClientOldServer: a 2026-07-28 client against a server of
// 2025-11-25 alone, which answers requests without a session 404: no
// check of 2025-11-25 judges the new client's requests by the rules of
// sessions and resumption.
func TestNewClientOldServer(t *testing.T) {
	rep, _, newErr := eraRun(t, scripted.NewServer(scripted.ServerOptions{}), nil, false, true)
	t.Logf("2026-07-28 client: %v\n%s", newErr, describe(rep))
	for _, id := range []string{checks.ServerUnknownSession404, checks.ClientNewSessionAfter404, checks.ServerPrimingEvent, checks.ClientReconnects} {
		if c := applied(rep, id); c > 0 {
			t.Errorf("%s judged %d cases of 2026-07-28 traffic", id, c)
		}
	}
	if n := applied(rep, checks.ClientRoutingHeaders); n == 0 {
		t.Error("client.routing-headers judged nothing: the new client's requests were not recognised")
	}
	if got := found(rep); len(got) > 0 {
		t.Errorf("found %v: the old server's 404 to a request without a session breaks no rule of either era\n%s", got, describe(rep))
	}
}

func isStateless(id string) bool {
	switch id {
	case checks.ClientReissuesCutRequest, checks.ClientListensAgain, checks.ClientRoutingHeaders,
		checks.ServerSilentAfterCancel, checks.ServerListenAcknowledged, checks.ServerHeaderMismatchRejected,
		checks.ClientTaskPollInterval:
		return true
	}
	return false
}
