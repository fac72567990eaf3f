package scripted_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/frayproxy/fray/examples/scripted"
	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy"
	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/report"
)

// pairRun is one run of a scripted pair through fray under a profile.
type pairRun struct {
	server  scripted.ServerFault
	opts    scripted.ServerOptions // besides the fault
	timeout time.Duration          // the client's per-call timeout
	client  scripted.ClientFault
	legacy  bool
	profile *profiles.Profile
	seed    uint64
	calls   int
	idle    time.Duration
}

// run starts the server, fray with a verifier, and the client, and returns
// the verifier's final report and the client's result.
func (r pairRun) run(t *testing.T) (report.Report, *scripted.Result, error) {
	t.Helper()
	sopts := r.opts
	sopts.Fault = r.server
	var h http.Handler = scripted.NewServer(sopts)
	if r.legacy {
		h = scripted.NewLegacyServer(scripted.ServerOptions{})
	}
	opts := proxy.Options{Profile: r.profile}
	if r.profile != nil {
		opts.Seed = &r.seed
	}
	calls := max(r.calls, 2)
	var res *scripted.Result
	var err error
	rep := judge(t, h, opts, nil, func(ctx context.Context, fray string) {
		if r.legacy {
			res, err = scripted.RunLegacyClient(ctx, fray, calls)
		} else {
			res, err = scripted.RunClient(ctx, scripted.ClientOptions{URL: fray + "/mcp", Calls: calls, Fault: r.client, Idle: r.idle, CallTimeout: r.timeout})
		}
	})
	return rep, res, err
}

// judge serves h, runs client against fray (opts, with h as its upstream)
// with a minute to finish, and returns the verifier's final report, cmd
// the client's command.
func judge(t *testing.T, h http.Handler, opts proxy.Options, cmd *report.Command, client func(ctx context.Context, frayURL string)) report.Report {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	opts.Upstream, _ = url.Parse(srv.URL)
	eng, err := proxy.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	fray := httptest.NewServer(eng.Handler())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client(ctx, fray.URL)
	// Every exchange has ended once the client's connections are closed
	// and fray's handlers have returned.
	fray.Close()
	rep, err := eng.Finish(eng.Stop(), cmd)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// foundOnly fails t unless want is the one check, besides the end-to-end
// consequences that cite it, that found something; client says how the
// client ended.
func foundOnly(t *testing.T, rep report.Report, want, client string) {
	t.Helper()
	if got := named(t, rep, want); !slices.Equal(got, []string{want}) {
		t.Errorf("checks that found something %v, want exactly [%s]%s\n%s", got, want, client, describe(rep))
	}
}

// foundOnlyAtSeverity is foundOnly with want found at the severity the
// catalog gives it.
func foundOnlyAtSeverity(t *testing.T, rep report.Report, want string, res any, err error) {
	t.Helper()
	foundOnly(t, rep, want, fmt.Sprintf(" (client: %+v, %v)", res, err))
	info, _ := checks.Lookup(want)
	for _, c := range rep.Checks {
		if c.ID == want && c.Severity != info.Severity {
			t.Errorf("%s was found at %s, its catalog severity is %s", c.ID, c.Severity, info.Severity)
		}
	}
}

// failed lists the checks of error severity that failed.
func failed(rep report.Report) []string {
	var out []string
	for _, c := range rep.Checks {
		if c.Status == report.StatusFail {
			out = append(out, c.ID)
		}
	}
	return out
}

func describe(rep report.Report) string {
	var b strings.Builder
	for _, c := range rep.Checks {
		if c.Status == report.StatusFail || c.Status == report.StatusWarn {
			fmt.Fprintf(&b, "  %s %s x%d", c.ID, c.Status, c.Count)
			for _, e := range c.Evidence {
				fmt.Fprintf(&b, "\n    - %s (session %d, exchange %d, ids %v, fault %v)", e.Message, e.Session, e.Exchange, e.EventIDs, e.Fault)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// loseProfile makes the third to fifth events of each tools/call stream
// vanish, then closes the stream; the server believes them delivered.
const loseProfile = `
[[fault]]
kind = "lose"
stream = "post"
request_method = "tools/call"
after_events = 2
events = 3
`

// profileText parses text as the profile name.
func profileText(t *testing.T, name, text string) *profiles.Profile {
	t.Helper()
	p, err := profiles.Parse(name+".toml", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// named lists the checks other than the end-to-end ones that found
// something (failed, or warned), and reports with t every end-to-end
// finding that does not cite want: a consequence of a misbehaviour (the
// request a client left unanswered) may be found too, but only as that
// misbehaviour's consequence.
func named(t *testing.T, rep report.Report, want string) []string {
	t.Helper()
	var out []string
	for _, c := range rep.Checks {
		if c.Status != report.StatusFail && c.Status != report.StatusWarn {
			continue
		}
		if !strings.HasPrefix(c.ID, "e2e.") {
			out = append(out, c.ID)
			continue
		}
		for _, ev := range c.Evidence {
			if want == "" || !strings.Contains(ev.Message, want) {
				t.Errorf("%s %s: %s, which does not cite %s", c.ID, c.Status, ev.Message, want)
			}
		}
	}
	return out
}

// holdProfile cuts each tools/call stream right after its priming event,
// and has fray read on what the server sends until the client resumes.
func holdProfile(t *testing.T) *profiles.Profile {
	return profileText(t, "hold", `
[[fault]]
kind = "close"
stream = "post"
request_method = "tools/call"
after_priming = true
hold = true
`)
}

func TestCorrectPairDirect(t *testing.T) {
	srv := httptest.NewServer(scripted.NewServer(scripted.ServerOptions{}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := scripted.RunClient(ctx, scripted.ClientOptions{URL: srv.URL + "/mcp", Calls: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Completed != 3 || res.Sessions != 1 || len(res.Resumes) != 0 {
		t.Errorf("result %+v, want 3 calls in one session with no resumption", res)
	}
}

// TestCorrectPairResumesThroughPollingServer: with every tools/call stream
// cut after its priming event, the client resumes each call from the
// priming event's id and finishes.
func TestCorrectPairResumesThroughPollingServer(t *testing.T) {
	fray := throughFray(t, scripted.NewServer(scripted.ServerOptions{}), "polling-server")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := scripted.RunClient(ctx, scripted.ClientOptions{URL: fray + "/mcp", Calls: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"0-0", "1-0"}
	if res.Completed != 2 || len(res.Resumes) != 2 || res.Resumes[0] != want[0] || res.Resumes[1] != want[1] {
		t.Errorf("result %+v, want 2 calls each resumed from its priming id %v", res, want)
	}
}

// TestLegacyPairThroughFray: the HTTP+SSE pair finishes its calls through
// fray under the legacy-sse profile, the endpoint event rewritten and the
// stream fragmented.
func TestLegacyPairThroughFray(t *testing.T) {
	fray := throughFray(t, scripted.NewLegacyServer(scripted.ServerOptions{}), "legacy-sse")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := scripted.RunLegacyClient(ctx, fray, 2)
	if err != nil {
		t.Fatal(err)
	}
	if res.Completed != 2 || res.Sessions != 1 {
		t.Errorf("result %+v, want 2 calls in one session", res)
	}
}

// throughFray serves h, and fray in front of it under a built-in profile,
// until the test ends, and returns fray's URL.
func throughFray(t *testing.T, h http.Handler, profile string) string {
	t.Helper()
	prof, err := profiles.Resolve(profile)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	eng, err := proxy.New(proxy.Options{Upstream: u, Profile: prof})
	if err != nil {
		t.Fatal(err)
	}
	fray := httptest.NewServer(eng.Handler())
	t.Cleanup(fray.Close)
	return fray.URL
}

// TestMisbehaviourMatrix: each scripted misbehaviour is named by exactly
// its own check, at the severity the catalog gives it, and by no other
// check but the end-to-end consequences that cite it.
func TestMisbehaviourMatrix(t *testing.T) {
	lose := profileText(t, "lose", loseProfile)
	// cut: each tools/call stream is closed right after its priming
	// event, which carries retry: 300ms.
	cut := profileText(t, "cut", `
[[fault]]
kind = "set-retry"
stream = "post"
priming = true
retry = "300ms"
[[fault]]
kind = "close"
stream = "post"
request_method = "tools/call"
after_priming = true
`)
	// gone: the first tools/call is answered 404 for its session.
	gone := profileText(t, "gone", `
[[fault]]
kind = "status"
stream = "post"
request_method = "tools/call"
status = 404
times = 1
`)
	hold := holdProfile(t)
	rows := []struct {
		name  string
		run   pairRun
		want  string
		calls int
	}{
		{"server without priming", pairRun{server: scripted.NoPriming}, "server.priming-event", 0},
		{"server replay with a gap", pairRun{server: scripted.ReplayGap, profile: lose}, "server.replay-complete", 0},
		{"server replays duplicates", pairRun{server: scripted.ReplayDuplicates, profile: lose}, "server.replay-no-duplicates", 0},
		{"server replays another stream", pairRun{server: scripted.ReplayForeign, profile: lose}, "server.replay-isolated", 0},
		{"client ignores retry", pairRun{client: scripted.IgnoreRetry, profile: cut}, "client.retry-honoured", 0},
		{"client sends no Last-Event-ID", pairRun{client: scripted.NoLastEventID, profile: cut, idle: 300 * time.Millisecond}, "client.last-event-id", 0},
		{"client sends a stale Last-Event-ID", pairRun{client: scripted.StaleLastEventID, profile: lose}, "client.last-event-id", 0},
		{"client loops after a 404", pairRun{client: scripted.LoopAfter404, profile: gone}, "client.new-session-after-404", 0},
		// The server closes its own stream after the priming event and, on
		// resumption, skips the first event it produced meanwhile: an event
		// that never crossed fray, seen by the ids' count.
		{"polling server replays with a gap", pairRun{server: scripted.ReplayGap, opts: scripted.ServerOptions{Poll: true}}, "server.replay-complete", 0},
		// The same gap, found by hold: random ids infer nothing, so only
		// the events fray read on after the cut show what was skipped.
		{"server replay with a gap under hold", pairRun{server: scripted.ReplayGap, opts: scripted.ServerOptions{IDs: scripted.IDsRandom}, profile: hold}, "server.replay-complete", 0},
		{"server's resumed stream stays silent", pairRun{server: scripted.SilentResume, profile: lose, timeout: 1500 * time.Millisecond}, "server.resume-continues", 0},
		// The client's GET without Last-Event-ID is answered 405 (no
		// standalone stream): it was a reconnection all the same.
		{"client sends no Last-Event-ID, the server answers 405", pairRun{client: scripted.NoLastEventID, profile: cut, opts: scripted.ServerOptions{NoStandaloneGET: true}}, "client.last-event-id", 0},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			rep, res, err := row.run.run(t)
			foundOnlyAtSeverity(t, rep, row.want, res, err)
		})
	}
}

// TestCorrectPairIsCleanUnderEveryProfile: the correct pair passes every
// check of error severity under every built-in profile, for 20 seeds.
func TestCorrectPairIsCleanUnderEveryProfile(t *testing.T) {
	seeds := 20
	if testing.Short() {
		seeds = 3
	}
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	var mu sync.Mutex
	fired := map[string]int{}   // faults fired per profile, over all seeds
	resumed := map[string]int{} // resumptions per profile
	for _, name := range profiles.Names() {
		prof, err := profiles.Resolve(name)
		if err != nil {
			t.Fatal(err)
		}
		for seed := range uint64(seeds) {
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				run := pairRun{profile: prof, seed: seed + 1, legacy: name == "legacy-sse"}
				rep, res, err := run.run(t)
				if err != nil {
					t.Errorf("%s seed %d: the correct client failed: %v (%+v)", name, seed+1, err, res)
				}
				if got := failed(rep); len(got) > 0 {
					t.Errorf("%s seed %d: failed checks %v\n%s", name, seed+1, got, describe(rep))
				}
				mu.Lock()
				fired[name] += rep.Totals.Faults
				resumed[name] += rep.Totals.Resumptions
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	// A clean verdict means something only if the profile did its work.
	// An idle timeout of minutes cannot act in a run of a second: its
	// fault is armed, never fired, and the verdict is inconclusive.
	for _, name := range profiles.Names() {
		idle := strings.HasPrefix(name, "idle-cut-")
		if fired[name] == 0 && !idle {
			t.Errorf("%s: no fault fired in %d runs", name, seeds)
		}
		if fired[name] != 0 && idle {
			t.Errorf("%s: %d faults fired in runs of a second", name, fired[name])
		}
	}
	for _, name := range []string{"polling-server", "lossy-resume", "retry-storm"} {
		if resumed[name] == 0 {
			t.Errorf("%s: the client never resumed in %d runs", name, seeds)
		}
	}
	t.Logf("faults fired per profile: %v; resumptions: %v", fired, resumed)
}

// TestCorrectServerVariantsAreClean: a correct server that answers in any
// of the ways the transport allows (counter or random ids, 405 to a GET
// without Last-Event-ID, JSON instead of SSE, closing its own streams to
// be polled) passes every check of error severity and warns nothing under
// every built-in Streamable HTTP profile, and with its streams held; the client completes every call,
// except where fray's own fault left it no id to resume from.
func TestCorrectServerVariantsAreClean(t *testing.T) {
	seeds := 3
	if testing.Short() {
		seeds = 1
	}
	variants := map[string]scripted.ServerOptions{
		"counter ids":      {IDs: scripted.IDsCounter},
		"random ids":       {IDs: scripted.IDsRandom},
		"405 to a GET":     {NoStandaloneGET: true},
		"JSON answers":     {JSON: true},
		"polling":          {Poll: true},
		"polling, counter": {Poll: true, IDs: scripted.IDsCounter},
	}
	// Besides the built-in profiles: every tools/call stream held.
	byName := map[string]*profiles.Profile{"hold": holdProfile(t)}
	for _, name := range profiles.Names() {
		if name == "legacy-sse" {
			continue
		}
		prof, err := profiles.Resolve(name)
		if err != nil {
			t.Fatal(err)
		}
		byName[name] = prof
	}
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for vname, opts := range variants {
		for name, prof := range byName {
			for seed := range uint64(seeds) {
				wg.Go(func() {
					sem <- struct{}{}
					defer func() { <-sem }()
					rep, res, err := pairRun{opts: opts, profile: prof, seed: seed + 1}.run(t)
					// A server that closes its streams after the priming
					// event, whose priming fray drops, leaves the client
					// nothing to resume from: fray's doing, excused.
					unrecoverable := opts.Poll && name == "no-priming"
					if err != nil && !unrecoverable {
						t.Errorf("%s, %s seed %d: the correct client failed: %v (%+v)", vname, name, seed+1, err, res)
					}
					if got := found(rep); len(got) > 0 {
						t.Errorf("%s, %s seed %d: found %v\n%s", vname, name, seed+1, got, describe(rep))
					}
				})
			}
		}
	}
	wg.Wait()
}
