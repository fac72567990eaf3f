package scripted_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/frayproxy/fray/examples/scripted"
	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy"
	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/report"
	"github.com/frayproxy/fray/proxy/trace"
)

// statelessRun is one run of the 2026-07-28 scripted pair through fray.
type statelessRun struct {
	server  scripted.StatelessServerOptions
	client  scripted.StatelessClientOptions // besides the URL
	profile *profiles.Profile
	seed    uint64
	trace   *trace.Writer // records the run when set
}

func (r statelessRun) run(t *testing.T) (report.Report, *scripted.StatelessResult, error) {
	t.Helper()
	opts := proxy.Options{Profile: r.profile}
	if r.trace != nil {
		opts.Trace = r.trace
	}
	if r.profile != nil {
		opts.Seed = &r.seed
	}
	copts := r.client
	if copts.Calls == 0 {
		copts.Calls = 4
	}
	var res *scripted.StatelessResult
	var err error
	// The client has exited when fray finishes: what it still owed will not come.
	rep := judge(t, scripted.NewStatelessServer(r.server), opts, &report.Command{Args: []string{"scripted-stateless-client"}}, func(ctx context.Context, fray string) {
		copts.URL = fray + "/mcp"
		res, err = scripted.RunStatelessClient(ctx, copts)
	})
	return rep, res, err
}

// found lists every check that failed or warned.
func found(rep report.Report) []string {
	var out []string
	for _, c := range rep.Checks {
		if c.Status == report.StatusFail || c.Status == report.StatusWarn {
			out = append(out, c.ID)
		}
	}
	return out
}

// applied reports how many cases check id judged.
func applied(rep report.Report, id string) int {
	for _, c := range rep.Checks {
		if c.ID == id {
			return c.Applied
		}
	}
	return 0
}

// statelessCut cuts every tools/call stream after its first event (the
// progress notification), before the response, at most twice.
func statelessCut(t *testing.T) *profiles.Profile {
	return profileText(t, "cut", `
[[fault]]
kind = "close"
stream = "post"
request_method = "tools/call"
after_events = 1
times = 2
`)
}

// TestStatelessMisbehaviourMatrix: each misbehaviour of the 2026-07-28
// scripted peers is named by exactly its own check, at the severity the
// catalog gives it, and by no other check but the end-to-end
// consequences that cite it.
func TestStatelessMisbehaviourMatrix(t *testing.T) {
	cut := statelessCut(t)
	lostListen := profileText(t, "lost-listen", `
[[fault]]
kind = "reset"
stream = "post"
request_method = "subscriptions/listen"
after_events = 1
times = 1
`)
	mismatch := profileText(t, "mismatch", `
[[fault]]
kind = "rewrite-header"
request_method = "tools/call"
header = "Mcp-Name"
value = "fray-mismatch"
times = 1
`)
	rows := []struct {
		name string
		run  statelessRun
		want string
	}{
		{"client re-issues with the same id", statelessRun{client: scripted.StatelessClientOptions{Fault: scripted.ReissueSameID}, profile: cut}, checks.ClientReissuesCutRequest},
		{"client gives up a cut call", statelessRun{client: scripted.StatelessClientOptions{Fault: scripted.GiveUp}, profile: cut}, checks.ClientReissuesCutRequest},
		{"server keeps sending after a close", statelessRun{server: scripted.StatelessServerOptions{Fault: scripted.KeepSending}, profile: cut}, checks.ServerSilentAfterCancel},
		{"server does not acknowledge a listen", statelessRun{server: scripted.StatelessServerOptions{Fault: scripted.NoAcknowledgement}}, checks.ServerListenAcknowledged},
		{"server serves a header mismatch", statelessRun{server: scripted.StatelessServerOptions{Fault: scripted.IgnoreHeaders}, profile: mismatch}, checks.ServerHeaderMismatchRejected},
		{"client sends a wrong Mcp-Name", statelessRun{client: scripted.StatelessClientOptions{Fault: scripted.BadRoutingHeaders}}, checks.ClientRoutingHeaders},
		{"client polls a task too fast", statelessRun{client: scripted.StatelessClientOptions{Tasks: true, Fault: scripted.PollTooFast}}, checks.ClientTaskPollInterval},
		{"client does not listen again", statelessRun{client: scripted.StatelessClientOptions{MaxAttempts: 1}, profile: lostListen}, checks.ClientListensAgain},
		{"server streams without X-Accel-Buffering", statelessRun{server: scripted.StatelessServerOptions{Fault: scripted.NoAccelBuffering}}, checks.ServerAccelBuffering},
		{"server refuses a revision under HTTP 200", statelessRun{server: scripted.StatelessServerOptions{Fault: scripted.RefuseVersionWith200},
			client: scripted.StatelessClientOptions{Version: unknownRevision, NoListen: true}}, checks.ServerUnsupportedVersion},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			rep, res, err := row.run.run(t)
			foundOnlyAtSeverity(t, rep, row.want, res, err)
		})
	}
}

// TestStatelessPairIsClean: the correct 2026-07-28 pair finds nothing,
// fails nothing and completes every call with no fault, under cuts, and
// under the stateless-cut profile over several seeds; and the checks of
// that revision judged something, so the clean verdict is earned.
func TestStatelessPairIsClean(t *testing.T) {
	seeds := 5
	if testing.Short() {
		seeds = 2
	}
	prof, err := profiles.Resolve("stateless-cut")
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]statelessRun{"no fault": {}, "cut": {profile: statelessCut(t), seed: 1},
		"tasks": {client: scripted.StatelessClientOptions{Tasks: true}}}
	for seed := range uint64(seeds) {
		runs["stateless-cut seed "+string(rune('1'+seed))] = statelessRun{profile: prof, seed: seed + 1}
	}
	var mu sync.Mutex
	total := map[string]int{}
	var wg sync.WaitGroup
	for name, run := range runs {
		wg.Go(func() {
			rep, res, err := run.run(t)
			if err != nil || res.Completed != 4 {
				t.Errorf("%s: the correct client failed: %v (%+v)", name, err, res)
			}
			if got := found(rep); len(got) > 0 {
				t.Errorf("%s: found %v\n%s", name, got, describe(rep))
			}
			if rep.Verdict != report.VerdictPass {
				t.Errorf("%s: verdict %s (%s)", name, rep.Verdict, rep.Why)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, id := range []string{checks.ClientRoutingHeaders, checks.ServerListenAcknowledged, checks.ClientReissuesCutRequest, checks.ServerSilentAfterCancel, checks.ClientListensAgain, checks.ClientTaskPollInterval, checks.ServerAccelBuffering} {
				total[id] += applied(rep, id)
			}
		})
	}
	wg.Wait()
	for id, n := range total {
		if n == 0 {
			t.Errorf("%s judged nothing over every run", id)
		}
	}
	t.Logf("cases judged: %v", total)
}

// TestStatelessTraceGivesTheSameVerdict: runs of 2026-07-28 traffic
// recorded to a trace, with findings, are judged the same by fray check as
// they were live: the revision, names, params digests and task fields the
// checks read all travel in the trace.
func TestStatelessTraceGivesTheSameVerdict(t *testing.T) {
	runs := map[string]statelessRun{
		"a cut call given up": {client: scripted.StatelessClientOptions{Fault: scripted.GiveUp}, profile: statelessCut(t), seed: 1},
		"tasks polled too fast": {client: scripted.StatelessClientOptions{Tasks: true, Fault: scripted.PollTooFast}, profile: profileText(t, "slow", `
[[fault]]
kind = "latency"
delay = "5ms"
`), seed: 1},
	}
	for name, run := range runs {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "run.jsonl")
			tw, err := trace.Create(path, trace.WriterOptions{Header: trace.Header{Started: time.Now(), Profile: run.profile.Name, Seed: run.seed, ProfileText: string(run.profile.Text)}})
			if err != nil {
				t.Fatal(err)
			}
			run.trace = tw
			live, _, _ := run.run(t)
			rd, err := trace.Open(path, trace.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer rd.Close()
			offline, note, err := proxy.Check(rd)
			if err != nil || note != "" {
				t.Fatalf("check: %v %q", err, note)
			}
			if len(found(live)) == 0 {
				t.Fatalf("the live run found nothing: the comparison would prove little\n%s", describe(live))
			}
			for i, c := range live.Checks {
				o := offline.Checks[i]
				if c.ID != o.ID || c.Status != o.Status || c.Count != o.Count || c.Applied != o.Applied {
					t.Errorf("%s: live %s x%d (%d judged), offline %s x%d (%d judged)", c.ID, c.Status, c.Count, c.Applied, o.Status, o.Count, o.Applied)
				}
			}
			if live.Verdict != offline.Verdict {
				t.Errorf("verdict live %s, offline %s", live.Verdict, offline.Verdict)
			}
		})
	}
}

// unknownRevision is a revision no server implements, later than
// 2026-07-28 so that fray judges its requests by that revision's rules.
const unknownRevision = "2099-01-01"

// TestVersionRefusalIsClean: a correct 2026-07-28 server refuses every
// request of a revision it does not implement with 400 and
// UnsupportedProtocolVersionError; fray judges each refusal
// (server.unsupported-version-error) and finds nothing, though no call
// succeeds.
func TestVersionRefusalIsClean(t *testing.T) {
	rep, res, err := statelessRun{client: scripted.StatelessClientOptions{Version: unknownRevision, NoListen: true}}.run(t)
	if err != nil || res.Failed != 4 || res.Completed != 0 {
		t.Errorf("the client's calls: %+v (%v), want 4 refused", res, err)
	}
	if got := found(rep); len(got) > 0 {
		t.Errorf("found %v\n%s", got, describe(rep))
	}
	if n := applied(rep, checks.ServerUnsupportedVersion); n != 4 {
		t.Errorf("%s judged %d refusals, want 4\n%s", checks.ServerUnsupportedVersion, n, describe(rep))
	}
}
