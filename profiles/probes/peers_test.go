package probes

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/examples/scripted"
	"github.com/frayproxy/fray/proxy"
	"github.com/frayproxy/fray/proxy/report"
)

// peers are the two peers a probe is shown on: one with the bug, one
// without. The end the probe does not judge is correct in both.
type peers struct {
	buggyClient scripted.ClientFault
	buggyServer scripted.ServerFault
	// stateless: the pair speaks 2026-07-28, and buggyStateless is its
	// client's bug.
	stateless            bool
	buggyStateless       scripted.StatelessClientFault
	buggyStatelessServer scripted.StatelessFault
	// What the probe's Needs asks of the pair, in both runs: the server
	// announces on the standalone stream and the client listens on it;
	// clients run at once (0 means 1); the server's event ids; the time
	// between the steps of a tool call (0 means the server's default).
	announce bool
	clients  int
	ids      scripted.IDStyle
	interval time.Duration
	keep     bool // the clients send no DELETE at the end
	listen   bool // the client opens the standalone stream, the server announcing nothing
	legacy   bool // the pair speaks the 2024-11-05 HTTP+SSE transport
	attempts int  // the client's attempts per stream; 0 means 8
}

// bugs says, for every probe, how a scripted peer reproduces its bug.
var bugs = map[string]peers{
	"resume-token-dropped":    {buggyClient: scripted.ForgetIDOnEmptyResume},
	"transient-503-on-resume": {buggyClient: scripted.GiveUpOnTransient},
	"gateway-502-on-resume":   {buggyClient: scripted.GiveUpOnTransient},
	"retry-line-throws":       {buggyClient: scripted.FailOnRetryField},
	"retry-not-waited":        {buggyClient: scripted.IgnoreRetry},
	"no-last-event-id":        {buggyClient: scripted.NoLastEventID},
	"priming-empty-data":      {buggyClient: scripted.FailOnEmptyData},
	"session-404-kept":        {buggyClient: scripted.LoopAfter404},
	"reconnect-storm":         {buggyClient: scripted.NoBackoff},
	"replay-other-streams":    {buggyServer: scripted.ReplayForeign},
	"replay-duplicate":        {buggyServer: scripted.ReplayDuplicates},
	// Calls long enough that the client listens on the resumed stream for
	// more than a second: the replay is judged when it leaves.
	"standalone-replay-empty": {buggyServer: scripted.StandaloneReplayEmpty, announce: true, interval: 150 * time.Millisecond},
	// The sessions' event ids are unique across sessions, as the ids of
	// the event store of that report are; only its streams are shared.
	// The clients keep their sessions: a session deleted while the other
	// resumes would take its events out of fray's view as the leak comes.
	"replay-other-sessions": {buggyServer: scripted.ReplayOtherSession, clients: 2, ids: scripted.IDsRandom, keep: true},
	"cut-call-left-pending": {stateless: true, buggyStateless: scripted.GiveUp},
	// The server's late messages go out on the client's open
	// subscriptions/listen stream, where fray sees them.
	"cancelled-still-answered": {stateless: true, buggyStatelessServer: scripted.KeepSending},
	// The first call takes 250 ms, so the second is the one held; the
	// client's few attempts on its standalone stream end before the
	// second call brings ids of an open stream.
	"standalone-resumed-with-post-id": {buggyClient: scripted.SharedLastEventID, listen: true, interval: 50 * time.Millisecond, attempts: 2},
	// Calls long enough for the correct client's growing waits on its
	// standalone stream.
	"standalone-reconnect-storm": {buggyClient: scripted.NoBackoff, listen: true, interval: 250 * time.Millisecond},
	"bad-message-kills-session":  {legacy: true, buggyServer: scripted.DieOnBadMessage},
	"get-reopen-refused":         {buggyServer: scripted.RefuseReopenedGET, listen: true, interval: 150 * time.Millisecond},
	"resume-empty-loop":          {buggyClient: scripted.LoopOnEmptyResume},
	// Calls long enough that one is in flight when the reconnection of
	// the standalone stream is refused.
	"get-405-on-reconnect": {buggyClient: scripted.TearDownOnGETFailure, listen: true, interval: 150 * time.Millisecond},
	// Three attempts on the standalone stream, each cut at 200 ms, while
	// calls of 1.25 s each run.
	"standalone-retries-tear-down": {buggyClient: scripted.TearDownOnGETFailure, listen: true, interval: 250 * time.Millisecond, attempts: 2},
	"failed-resume-empty":          {buggyServer: scripted.EmptyResumeWhenDone},
	// Ids from one counter for the whole server, so that "1" is the first
	// event of one of the two sessions; the server announces on the
	// standalone streams, whose events are what leaks.
	"guessed-last-event-id": {buggyServer: scripted.ReplayGuessedID, clients: 2, ids: scripted.IDsServer, keep: true, announce: true, interval: 150 * time.Millisecond},
}

// runProbe runs p once through an engine, as fray run --probe does, with
// the scripted pair pr describes, with its bug or without, and judges the
// report.
func runProbe(t *testing.T, p Probe, pr peers, buggy bool) (Result, report.Report) {
	t.Helper()
	prof, err := p.Profile()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var srv http.Handler
	switch {
	case pr.legacy:
		so := scripted.ServerOptions{}
		if buggy {
			so.Fault = pr.buggyServer
		}
		srv = scripted.NewLegacyServer(so)
	case pr.stateless:
		so := scripted.StatelessServerOptions{}
		if buggy {
			so.Fault = pr.buggyStatelessServer
		}
		srv = scripted.NewStatelessServer(so)
	default:
		so := scripted.ServerOptions{Announce: pr.announce, IDs: pr.ids, Interval: pr.interval}
		if buggy {
			so.Fault = pr.buggyServer
		}
		srv = scripted.NewServer(so)
	}
	up := httptest.NewServer(srv)
	defer up.Close()
	u, _ := url.Parse(up.URL)
	eng, err := proxy.New(proxy.Options{Upstream: u, Profile: prof})
	if err != nil {
		t.Fatal(err)
	}
	fray := httptest.NewServer(eng.Handler())
	defer fray.Close()
	errs := make(chan error, max(pr.clients, 1))
	for range max(pr.clients, 1) {
		go func() { errs <- runClient(ctx, fray.URL+"/mcp", pr, buggy) }()
	}
	var cerr error
	for range max(pr.clients, 1) {
		cerr = errors.Join(cerr, <-errs)
	}
	eng.Wait(ctx, true)
	cmd := &report.Command{Args: []string{"scripted"}}
	if cerr != nil {
		cmd.ExitCode, cmd.Error = 1, cerr.Error()
	}
	r, err := eng.Finish(eng.Stop(), cmd)
	if err != nil {
		t.Fatal(err)
	}
	return Judge(p, p.TriggerKinds(prof), r), r
}

// runClient runs one scripted client of the pair against endpoint.
func runClient(ctx context.Context, endpoint string, pr peers, buggy bool) error {
	if pr.legacy {
		_, err := scripted.RunLegacyClient(ctx, strings.TrimSuffix(endpoint, "/mcp"), 2)
		return err
	}
	if pr.stateless {
		o := scripted.StatelessClientOptions{URL: endpoint, Calls: 2, Backoff: 100 * time.Millisecond, MaxAttempts: 8}
		if buggy {
			o.Fault = pr.buggyStateless
		}
		_, err := scripted.RunStatelessClient(ctx, o)
		return err
	}
	o := scripted.ClientOptions{
		URL: endpoint, Calls: 2, Listen: pr.announce || pr.listen, KeepSession: pr.keep,
		Backoff: 100 * time.Millisecond, MaxAttempts: cmp.Or(pr.attempts, 8), Idle: 600 * time.Millisecond,
	}
	if buggy {
		o.Fault = pr.buggyClient
	}
	_, err := scripted.RunClient(ctx, o)
	return err
}

// TestProbesOnPeers shows every probe on a peer that has its bug and on
// one that has not: with the bug, the probe's own finding is made, and no
// other check finds anything; without it, the peer survives the same
// faults.
func TestProbesOnPeers(t *testing.T) {
	for _, p := range All() {
		bug, ok := bugs[p.Name]
		if !ok {
			t.Errorf("probe %s has no peer with its bug in this test", p.Name)
			continue
		}
		t.Run(p.Name, func(t *testing.T) {
			t.Parallel()
			got, r := runProbe(t, p, bug, true)
			t.Logf("with the bug: %s", got.Detail)
			if got.Outcome != Found || !got.Triggered {
				t.Errorf("with the bug: %s (triggered %v): %s\n%s", got.Outcome, got.Triggered, got.Detail, failing(r))
			}
			for _, c := range r.Checks {
				if c.Count > 0 && c.ID != p.Finding {
					t.Errorf("with the bug, %s found something too:\n%s", c.ID, failing(r))
				}
			}
			got, r = runProbe(t, p, bug, false)
			if got.Outcome != Survived {
				t.Errorf("without the bug: %s (triggered %v): %s\n%s", got.Outcome, got.Triggered, got.Detail, failing(r))
			}
		})
	}
}

// failing lists the checks of r that found something, for a test's
// message.
func failing(r report.Report) string {
	s := "verdict " + r.Verdict + ": " + r.Why
	for _, c := range r.Checks {
		if c.Count > 0 {
			s += "\n  " + c.ID
			for _, e := range c.Evidence {
				s += "\n    " + e.Message
			}
		}
	}
	for _, f := range r.Faults {
		s += "\n  fault " + f.Kind
	}
	return s
}
