package verify

import (
	"net/http"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
)

// lostStandalone opens a session whose standalone GET stream primes with
// g1 and loses g2 to a fault that then closes the stream.
func lostStandalone(t *testing.T) *timeline {
	tl := initialized(t)
	tl.get("s1").stream200().
		send(primeRetry("g1", 100)).
		send(note("g2").as(observe.Lost, fault(0, "lose"))).
		end(observe.FaultClosed)
	tl.wait(200 * ms)
	return tl
}

// TestStandaloneReplayJudgedWhenLeft: a resumption of the standalone GET
// stream that brings nothing but comments for a second, until the client
// leaves, replayed nothing of what the server had sent after
// Last-Event-ID: no later event will end its replay, as a POST stream's
// response would (server.replay-complete). Left sooner, or a POST
// stream's, it is not judged.
func TestStandaloneReplayJudgedWhenLeft(t *testing.T) {
	// leftAfter resumes the stream from id and leaves the resumption after
	// wait, the events given replayed meanwhile.
	leftAfter := func(tl *timeline, id string, wait time.Duration, replayed ...ev) {
		x := tl.get("s1", id).stream200()
		for _, e := range replayed {
			x.send(e)
		}
		tl.wait(wait)
		x.end(observe.ClientGone)
	}
	tell(t, lostStandalone, (*timeline).final, []story{
		{"silent for a second", func(tl *timeline) { leftAfter(tl, "g1", 1200*ms) },
			isWith(checks.ServerReplayComplete, report.StatusWarn, 1, func(e report.Evidence) bool { return len(e.EventIDs) != 1 || e.EventIDs[0] != "g2" })},
		{"replayed, then silent", func(tl *timeline) { leftAfter(tl, "g1", 1200*ms, note("g2")) }, is(checks.ServerReplayComplete, report.StatusPass, 0)},
		{"left sooner", func(tl *timeline) { leftAfter(tl, "g1", 300*ms) }, excuses(checks.ServerReplayComplete, "the resumption was cut before its replay ended")},
	})
	tell(t, lostResponse, (*timeline).final, []story{
		{"a POST stream's resumption", func(tl *timeline) { leftAfter(tl, "a2", 1200*ms) },
			excuses(checks.ServerReplayComplete, "the resumption was cut before its replay ended")},
	})
}

// TestStandaloneReplayJudgedOnDelete: a client that deletes its session
// while a resumption of its standalone stream has brought nothing for a
// second has left it too.
func TestStandaloneReplayJudgedOnDelete(t *testing.T) {
	tl := lostStandalone(t)
	x := tl.get("s1", "g1").stream200()
	tl.wait(1200 * ms)
	tl.request("DELETE", "/mcp", mcp.StreamOther, "s1", "").respond(http.StatusOK, false, "").end(observe.Complete)
	x.end(observe.Complete)
	expect(t, tl.final(), checks.ServerReplayComplete, report.StatusWarn, 1)
}

// TestGiveUpAfterEmptyReplayExcused: a client that came back and got an
// empty replay, and does not ask again, is not blamed for it: the
// server's incomplete replay is the cause, and only it fails.
func TestGiveUpAfterEmptyReplayExcused(t *testing.T) {
	tl := initialized(t)
	tl.wait(100 * time.Millisecond)
	lose(tl)
	tl.wait(100 * time.Millisecond)
	tl.get("s1", "a2").stream200().end(observe.Complete)
	tl.wait(time.Minute)
	r := tl.report()
	if c := check(t, r, checks.ServerReplayComplete); c.Count != 1 {
		t.Errorf("server.replay-complete found %d, want 1: %+v", c.Count, c.Evidence)
	}
	expectNone(t, r, checks.ClientReconnects)
}
