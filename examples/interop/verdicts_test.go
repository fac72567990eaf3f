package interop_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy"
	"github.com/frayproxy/fray/proxy/report"
)

// sdkPair is a client and a server of one official SDK.
type sdkPair struct {
	name   string
	start  startServer
	client runClient
}

var sdkPairs = []sdkPair{
	{"ts", startTSStreamable, tsStreamableClient(0)},
	{"go", startGoStreamable, goStreamableClient(0)},
}

// expectation is what fray finds on a real SDK pair under one profile.
type expectation struct {
	// findings are "check:status" for each failed or warned check, in
	// catalog order; each is a genuine misbehaviour, explained below.
	findings []string
	// maybe are findings that show or not depending on the peers' timing.
	maybe []string
	// clientFails, when set, says why the client is expected to fail.
	clientFails string
}

// sdkExpectation is the verdict for a pair under a profile. Anything else
// fails the test, and so does an expectation that no longer shows.
//
// Both SDKs open the standalone GET stream without a priming event (the
// TypeScript server sends nothing on it, the Go server a ": ok" comment).
// The published text asks for a priming event on POST streams only; on the
// GET stream it asks a server that closes the stream to let the client
// reconnect, which server.priming-event-get holds only when the server
// ends that stream without having sent an id. Neither SDK server ends it,
// so a correct SDK pair shows no finding at all.
//
// go-sdk v1.8.0 under flaky-gateway: the standalone GET, cut and resumed,
// meets a 503 with Retry-After; the client's transport treats that one
// transient error as fatal and rejects every later request, so tools/list
// fails ("rejected by transport ... Service Unavailable"). This is
// go-sdk#683, named by client.retries-transient (the SHOULD to reconnect
// after a disconnection; a warning). Its consequences follow: the
// tools/list whose stream was reset never gets its response
// (e2e.every-request-answered fails, citing client.retries-transient),
// and that response, sent on the reset stream, is lost
// (e2e.no-message-lost, a warning).
func sdkExpectation(pair, profile string) expectation {
	var e expectation
	if pair == "go" && profile == "flaky-gateway" {
		e.findings = []string{"client.retries-transient:warn", "e2e.every-request-answered:fail", "e2e.no-message-lost:warn"}
		e.clientFails = "go-sdk#683: one transient 503 during reconnection tears the session down"
	}
	return e
}

// sdkSeeds overrides a profile's seed where its own seed spares the pair:
// lossy-resume hits half the POST streams, and the Go client makes one
// tool call, which the profile's seed 42 leaves alone; seed 3 loses events.
// stateless-cut's seed 7 likewise leaves the Go client's one call alone.
var sdkSeeds = map[string]*uint64{"go/lossy-resume": ptr(uint64(3)), "go/stateless-cut": ptr(uint64(3))}

// sdkQuiet are the pairs under a profile whose faults cannot act, and why:
// no fault fires, and the verdict must say inconclusive.
var sdkQuiet = map[string]string{
	"ts/buffering-proxy": "the TypeScript server sends X-Accel-Buffering: no, which the buffer honours as nginx does",
}

func ptr[T any](v T) *T { return &v }

// TestSDKPairsUnderEveryProfile runs each SDK's pair through fray under
// every built-in Streamable HTTP profile with the verifier on, and holds
// the verdicts to the expectations.
func TestSDKPairsUnderEveryProfile(t *testing.T) {
	forSDKPairs(t, 60*time.Second, func(ctx context.Context, t *testing.T, pr sdkPair, up upstream, name string) {
		rep, run := verdictRun(ctx, t, up, name, pr.client, sdkSeeds[pr.name+"/"+name])
		got := findings(rep)
		want := sdkExpectation(pr.name, name)
		t.Logf("client: ok=%v %s; findings %v", run.OK, run.Error, got)
		if !sameFindings(got, want) {
			t.Errorf("findings %v, want %v (and maybe %v)\n%s", got, want.findings, want.maybe, evidence(rep))
		}
		if run.OK != (want.clientFails == "") {
			t.Errorf("client ok=%v (%s), expected failure: %q", run.OK, run.Error, want.clientFails)
		}
		// An idle timeout of minutes never acts in a short run: its
		// fault is armed, not fired, and the verdict inconclusive.
		_, quiet := sdkQuiet[pr.name+"/"+name]
		idle := strings.HasPrefix(name, "idle-cut-") || quiet
		switch {
		case idle && (rep.Totals.Faults != 0 || rep.Verdict != report.VerdictInconclusive):
			t.Errorf("%s: %d faults fired, verdict %s; want none and inconclusive", name, rep.Totals.Faults, rep.Verdict)
		case !idle && rep.Totals.Faults == 0 && name != "flaky-gateway":
			t.Errorf("no fault fired under %s", name)
		}
	})
}

// forSDKPairs runs f as subtest PAIR/PROFILE for each SDK pair under each
// built-in Streamable HTTP profile, its server started, within timeout.
func forSDKPairs(t *testing.T, timeout time.Duration, f func(ctx context.Context, t *testing.T, pr sdkPair, up upstream, profile string)) {
	for _, pr := range sdkPairs {
		for _, name := range streamableProfiles() {
			t.Run(pr.name+"/"+name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), timeout)
				defer cancel()
				f(ctx, t, pr, pr.start(ctx, t), name)
			})
		}
	}
}

// verdictRun runs one client through fray with a profile and a verifier.
func verdictRun(ctx context.Context, t *testing.T, up upstream, name string, client runClient, seed *uint64) (report.Report, clientRun) {
	t.Helper()
	u, err := url.Parse(up.origin)
	if err != nil {
		t.Fatal(err)
	}
	prof, err := profiles.Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := proxy.New(proxy.Options{Upstream: u, Profile: prof, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(eng.Handler())
	defer srv.Close()
	run := client(ctx, t, srv.URL+up.path)
	// The client exited: its streams end with it; a standalone stream the
	// peer leaves open is fray's to end.
	wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	eng.Wait(wctx, false)
	cancel()
	st := eng.Stop()
	r, err := eng.Finish(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r, run
}

// sameFindings reports whether got is want's findings plus only findings
// that may show.
func sameFindings(got []string, want expectation) bool {
	rest := slices.DeleteFunc(slices.Clone(got), func(f string) bool { return slices.Contains(want.maybe, f) })
	var must []string
	for _, f := range want.findings {
		if !slices.Contains(want.maybe, f) {
			must = append(must, f)
		}
	}
	return slices.Equal(rest, must)
}

// findings lists "id:status" for each failed or warned check.
func findings(rep report.Report) []string {
	var out []string
	for _, c := range rep.Checks {
		if c.Status == report.StatusFail || c.Status == report.StatusWarn {
			out = append(out, c.ID+":"+c.Status)
		}
	}
	return out
}

func evidence(rep report.Report) string {
	var b strings.Builder
	for _, c := range rep.Checks {
		for _, e := range c.Evidence {
			fmt.Fprintf(&b, "  %s [%s]: %s (session %d, exchange %d, related %v, ids %v, fault %v, at %dms)\n", c.ID, c.Status, e.Message, e.Session, e.Exchange, e.Related, e.EventIDs, e.Fault, e.AtMS)
		}
	}
	return b.String()
}

// TestSDKPairsManySeeds runs each SDK pair under every built-in Streamable
// HTTP profile with seeds 1 to FRAY_SDK_SEEDS (skipped without it: 240
// runs at 20 seeds take minutes): no finding, and no client failure, that
// sdkExpectation does not allow for that profile; a seed may spare the
// pair (no fault fired), which is not an error here.
//
//	FRAY_SDK_SEEDS=20 go test -run TestSDKPairsManySeeds -v -timeout 30m ./examples/interop/
func TestSDKPairsManySeeds(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv("FRAY_SDK_SEEDS"))
	if err != nil || n <= 0 {
		t.Skip("set FRAY_SDK_SEEDS=N to run every SDK pair under every profile with seeds 1..N")
	}
	forSDKPairs(t, time.Duration(n)*30*time.Second, func(ctx context.Context, t *testing.T, pr sdkPair, up upstream, name string) {
		want := sdkExpectation(pr.name, name)
		allowed := append(slices.Clone(want.findings), want.maybe...)
		fired, clean := 0, 0
		for seed := range uint64(n) {
			rep, run := verdictRun(ctx, t, up, name, pr.client, ptr(seed+1))
			fired += rep.Totals.Faults
			got := findings(rep)
			for _, f := range got {
				if !slices.Contains(allowed, f) {
					t.Errorf("seed %d: finding %s, not among %v\n%s", seed+1, f, allowed, evidence(rep))
				}
			}
			if !run.OK && want.clientFails == "" {
				t.Errorf("seed %d: the client failed: %s", seed+1, run.Error)
			}
			if len(got) == 0 && run.OK {
				clean++
			}
		}
		t.Logf("%d seeds: %d clean, %d faults fired", n, clean, fired)
	})
}
