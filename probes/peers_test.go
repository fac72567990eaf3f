package probes

import (
	"context"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/frayproxy/fray/engine"
	"github.com/frayproxy/fray/internal/scripted"
	"github.com/frayproxy/fray/proxy/report"
)

// peers are the two peers a probe is shown on: one with the bug, one
// without. The end the probe does not judge is correct in both.
type peers struct {
	buggyClient scripted.ClientFault
	buggyServer scripted.ServerFault
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
}

// runProbe runs p once through an engine, as fray run --probe does, with
// a scripted server and client, and judges the report.
func runProbe(t *testing.T, p Probe, server scripted.ServerFault, client scripted.ClientFault) (Result, report.Report) {
	t.Helper()
	prof, err := p.Profile()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	up := httptest.NewServer(scripted.NewServer(scripted.ServerOptions{Fault: server}))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	eng, err := engine.New(engine.Options{Upstream: u, Profile: prof})
	if err != nil {
		t.Fatal(err)
	}
	fray := httptest.NewServer(eng.Handler())
	defer fray.Close()
	_, cerr := scripted.RunClient(ctx, scripted.ClientOptions{
		URL: fray.URL + "/mcp", Calls: 2, Fault: client,
		Backoff: 100 * time.Millisecond, MaxAttempts: 8, Idle: 600 * time.Millisecond,
	})
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

// TestProbesOnPeers shows every probe on a peer that has its bug and on
// one that has not: with the bug, the probe's own finding is made; without
// it, the peer survives the same faults.
func TestProbesOnPeers(t *testing.T) {
	for _, p := range All() {
		bug, ok := bugs[p.Name]
		if !ok {
			t.Errorf("probe %s has no peer with its bug in this test", p.Name)
			continue
		}
		t.Run(p.Name, func(t *testing.T) {
			t.Parallel()
			got, r := runProbe(t, p, bug.buggyServer, bug.buggyClient)
			if got.Outcome != Found || !got.Triggered {
				t.Errorf("with the bug: %s (triggered %v): %s\n%s", got.Outcome, got.Triggered, got.Detail, failing(r))
			}
			got, r = runProbe(t, p, scripted.ServerCorrect, scripted.ClientCorrect)
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
