package scripted_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/examples/scripted"
	"github.com/frayproxy/fray/proxy"
	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/report"
)

// checkOf returns check id of rep.
func checkOf(t *testing.T, rep report.Report, id string) report.Check {
	t.Helper()
	for _, c := range rep.Checks {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no check %s in the report", id)
	return report.Check{}
}

// excusedFor counts the cases check id excused for reason.
func excusedFor(t *testing.T, rep report.Report, id, reason string) int {
	t.Helper()
	for _, e := range checkOf(t, rep, id).Excused {
		if e.Reason == reason {
			return e.Count
		}
	}
	return 0
}

// TestSilentResumeThenCancel: the client resumes a call whose stream fray
// cut, the resumed stream brings keep-alive comments only, and at its call
// timeout the client cancels the call with notifications/cancelled, upon
// which the server ends the stream. The silence is the server's failure,
// and the cancellation is no excuse for the unanswered call.
func TestSilentResumeThenCancel(t *testing.T) {
	lose := profileText(t, "lose", loseProfile)
	rep, res, err := pairRun{server: scripted.SilentResume, profile: lose, timeout: 1500 * time.Millisecond}.run(t)
	if err == nil {
		t.Fatalf("the client got its result from a silent server: %+v", res)
	}
	foundOnly(t, rep, checks.ServerResumeContinues, "")
	c := checkOf(t, rep, checks.ServerResumeContinues)
	if c.Status != report.StatusFail || len(c.Evidence) == 0 || !strings.Contains(c.Evidence[0].Message, "having waited in vain, cancelled it (notifications/cancelled on exchange") {
		t.Errorf("server.resume-continues %s: %+v", c.Status, c.Evidence)
	}
	if n := excusedFor(t, rep, checks.E2EEveryRequestAnswered, "cancelled by the client"); n != 0 {
		t.Errorf("the unanswered call was excused by its cancellation %d time(s)", n)
	}
	if rep.Verdict != report.VerdictFail {
		t.Errorf("verdict %s (%s)", rep.Verdict, rep.Why)
	}
}

// TestStalledResumeThenCancelIsFrays: the same client on a correct server,
// whose resumed stream fray stalls for ever: the silence is fray's, and no
// check blames the server.
func TestStalledResumeThenCancelIsFrays(t *testing.T) {
	prof := profileText(t, "lose-stall", loseProfile+`
[[fault]]
kind = "stall"
stream = "resume"
forever = true
`)
	rep, res, err := pairRun{profile: prof, timeout: 1500 * time.Millisecond}.run(t)
	if err == nil {
		t.Fatalf("the client got its result through a stalled stream: %+v", res)
	}
	for _, c := range rep.Checks {
		if strings.HasPrefix(c.ID, "server.") && (c.Status == report.StatusFail || c.Status == report.StatusWarn) {
			t.Errorf("%s blamed the server for fray's stall:\n%s", c.ID, describe(rep))
		}
	}
	if n := excusedFor(t, rep, checks.ServerResumeContinues, "fray held the resumed stream back (a stall, delay or buffer fault): its silence may be fray's"); n == 0 {
		t.Errorf("server.resume-continues was not excused for the stall:\n%s", describe(rep))
	}
}

// TestReusedIDsAreOneFailure: a server whose every stream counts its ids
// from 1 fails server.event-ids-unique, and its resumptions, which replay
// its own stream under ids other streams used, fail nothing else.
func TestReusedIDsAreOneFailure(t *testing.T) {
	lose := profileText(t, "lose", loseProfile)
	rep, res, err := pairRun{server: scripted.ReusedIDs, profile: lose, calls: 3}.run(t)
	if err != nil {
		t.Errorf("the client failed: %v (%+v)", err, res)
	}
	foundOnly(t, rep, checks.ServerEventIDsUnique, "")
	if n := excusedFor(t, rep, checks.ServerReplayIsolated, "explained by server.event-ids-unique"); n == 0 {
		t.Errorf("no replay under a reused id was seen, so the test shows nothing:\n%s", describe(rep))
	}
}

// TestResumedWithAnotherStreamsID: a client that comes back for its
// second call's stream with the last id of its first call's stream came
// back: client.last-event-id says with what, and the unanswered call
// cites it, not client.reconnects.
func TestResumedWithAnotherStreamsID(t *testing.T) {
	lose := profileText(t, "lose", loseProfile)
	rep, res, err := pairRun{client: scripted.PreviousStreamID, profile: lose}.run(t)
	if err == nil {
		t.Fatalf("the client completed its calls: %+v", res)
	}
	foundOnly(t, rep, checks.ClientLastEventID, "")
	c := checkOf(t, rep, checks.ClientLastEventID)
	if len(c.Evidence) == 0 || !strings.Contains(c.Evidence[0].Message, "which that stream never delivered (it was delivered on another stream of the session") {
		t.Errorf("client.last-event-id: %+v", c.Evidence)
	}
	if e := checkOf(t, rep, checks.E2EEveryRequestAnswered); e.Status != report.StatusFail {
		t.Errorf("the unanswered call did not fail: %s\n%s", e.Status, describe(rep))
	}
}

// TestAccelBufferingStrippedBetween: a correct 2026-07-28 server behind a
// reverse proxy that removes X-Accel-Buffering, as nginx does, with fray
// in front of the proxy. The warning says what fray received and that an
// intermediary between the server and fray may have removed the header.
func TestAccelBufferingStrippedBetween(t *testing.T) {
	srv := httptest.NewServer(scripted.NewStatelessServer(scripted.StatelessServerOptions{}))
	defer srv.Close()
	target, _ := url.Parse(srv.URL)
	rp := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(target) },
		FlushInterval: -1,
		ModifyResponse: func(resp *http.Response) error {
			resp.Header.Del(mcp.HeaderAccelBuffering)
			resp.Header.Add("Via", "1.1 strip")
			return nil
		},
	}
	var res *scripted.StatelessResult
	var err error
	rep := judge(t, rp, proxy.Options{}, &report.Command{Args: []string{"scripted-stateless-client"}}, func(ctx context.Context, fray string) {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		res, err = scripted.RunStatelessClient(ctx, scripted.StatelessClientOptions{URL: fray + "/mcp", Calls: 2})
	})
	if err != nil {
		t.Fatalf("the client failed: %v (%+v)", err, res)
	}
	if got := found(rep); !slices.Equal(got, []string{checks.ServerAccelBuffering}) {
		t.Errorf("found %v, want exactly [%s]\n%s", got, checks.ServerAccelBuffering, describe(rep))
	}
	c := checkOf(t, rep, checks.ServerAccelBuffering)
	want := "without X-Accel-Buffering, not X-Accel-Buffering: no: the server did not send it, or an intermediary between the server and fray removed it (nginx, for one, consumes it); the answer came through Via: 1.1 strip"
	if len(c.Evidence) == 0 || !strings.HasPrefix(c.Evidence[0].Message, "fray received the SSE stream answering request") || !strings.HasSuffix(c.Evidence[0].Message, want) {
		t.Errorf("evidence %+v\nwant it to end with %q", c.Evidence, want)
	}
}
