package verify

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
)

func TestResumeContinues(t *testing.T) {
	tell(t, lostResponse, (*timeline).final, []story{
		{"a resumption that goes on to the response passes", func(tl *timeline) {
			tl.get("s1", "a2").stream200().send(note("a3")).send(resp("a4", 1)).end(observe.Complete)
		}, is(checks.ServerResumeContinues, report.StatusSkip, 0)},
		{"a resumed stream of keep-alives only, which the client leaves, fails", func(tl *timeline) {
			tl.get("s1", "a2").stream200().keepAlives(15).end(observe.ClientGone)
		}, func(t *testing.T, r report.Report) {
			c := expect(t, r, checks.ServerResumeContinues, report.StatusFail, 1)
			checkEvidence(t, c, func(e report.Evidence) bool {
				// The resumption is the exchange after the initialize and the call.
				return e.Exchange != 3 || !strings.Contains(e.Message, "request 1 (tools/call)")
			})
			// One cause, one failure: the unanswered request is its consequence.
			expectExcused(t, r, checks.E2EEveryRequestAnswered, "explained by server.resume-continues")
			expectNone(t, r, checks.ClientReconnects, checks.ClientLastEventID, checks.ClientRetriesTransient)
		}},
		{"some message on the resumed stream passes, though the answer is late", func(tl *timeline) {
			g := tl.get("s1", "a2").stream200().send(note("a3"))
			tl.wait(5 * time.Second)
			g.end(observe.ClientGone)
		}, all(is(checks.ServerResumeContinues, report.StatusPass, 0), is(checks.E2EEveryRequestAnswered, report.StatusFail, 1))},
		{"a resumed stream fray cuts is excused", func(tl *timeline) {
			g := tl.get("s1", "a2").stream200()
			tl.wait(5 * time.Second)
			g.end(observe.FaultClosed)
		}, excuses(checks.ServerResumeContinues, "the resumed stream was cut by fray")},
		{"a client that leaves at once gave the server no chance", func(tl *timeline) {
			g := tl.get("s1", "a2").stream200()
			tl.wait(100 * ms)
			g.end(observe.ClientGone)
		}, excuses(checks.ServerResumeContinues, "the client left the resumed stream within a second")},
		{"a resumed stream the server ends is a poll, judged no further", func(tl *timeline) {
			g := tl.get("s1", "a2").stream200()
			tl.wait(5 * time.Second)
			g.end(observe.Complete)
		}, is(checks.ServerResumeContinues, report.StatusSkip, 0)},
	})
}

func TestDisconnectNotCancel(t *testing.T) {
	cut := func(t *testing.T) *timeline {
		tl := initialized(t)
		tl.call("s1", 1, "tools/call").stream200().send(prime("a1")).send(note("a2")).end(observe.FaultClosed)
		tl.wait(time.Second)
		return tl
	}
	tell(t, cut, (*timeline).final, []story{
		{"an error that is not a cancellation passes", func(tl *timeline) {
			tl.get("s1", "a2").stream200().send(failed("a3", 1, -32602, "bad argument")).end(observe.Complete)
		}, is(checks.ServerDisconnectNotCancel, report.StatusPass, 0)},
		{"a cancellation error after the cut fails", func(tl *timeline) {
			tl.get("s1", "a2").stream200().send(failed("a3", 1, -32603, "slow-count: step 10: context canceled")).end(observe.Complete)
		}, isWith(checks.ServerDisconnectNotCancel, report.StatusWarn, 1, says("context canceled"))},
		{"the request-cancelled code fails too", func(tl *timeline) {
			tl.get("s1", "a2").stream200().send(failed("a3", 1, -32800, "Request cancelled")).end(observe.Complete)
		}, is(checks.ServerDisconnectNotCancel, report.StatusWarn, 1)},
		{"a client that cancelled is answered as it asked", func(tl *timeline) {
			tl.notify("s1", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`).respond(202, false, "").end(observe.Complete)
			tl.get("s1", "a2").stream200().send(failed("a3", 1, -32800, "Request cancelled")).end(observe.Complete)
		}, excuses(checks.ServerDisconnectNotCancel, "the client cancelled the request")},
	})
	tell(t, initialized, (*timeline).final, []story{
		{"an error on a stream never cut is not judged", func(tl *timeline) {
			tl.call("s1", 1, "tools/call").stream200().send(prime("a1")).send(failed("a2", 1, -32603, "context canceled")).end(observe.Complete)
		}, is(checks.ServerDisconnectNotCancel, report.StatusSkip, 0)},
	})
}

func TestMessagesOnOwnStream(t *testing.T) {
	tell(t, initialized, (*timeline).final, []story{
		{"progress on its request's stream and its resumption passes", func(tl *timeline) {
			g := tl.get("s1").stream200()
			tl.callProgress("s1", 1, "tools/call", "t1").stream200().send(prime("a1")).send(progress("a2", "t1")).end(observe.Complete)
			tl.wait(time.Second)
			tl.get("s1", "a2").stream200().send(progress("a3", "t1")).send(resp("a4", 1)).end(observe.Complete)
			g.end(observe.ClientGone)
		}, func(t *testing.T, r report.Report) {
			// With one call in the session, its stream's progress is its own
			// without a look at the token: nothing to judge, nothing found.
			expectNone(t, r, checks.ServerMessagesOnOwnStream)
		}},
		{"progress on the standalone GET stream is named", func(tl *timeline) {
			g := tl.get("s1").stream200()
			x := tl.callProgress("s1", 1, "tools/call", "t1").stream200().send(prime("a1"))
			g.send(progress("g1", "t1"))
			x.send(resp("a2", 1)).end(observe.Complete)
			g.end(observe.ClientGone)
		}, isWith(checks.ServerMessagesOnOwnStream, report.StatusWarn, 1, func(e report.Evidence) bool {
			// The standalone GET is the exchange after the initialize.
			return e.Exchange != 2 || !strings.Contains(e.Message, "standalone GET stream")
		})},
		{"progress on another request's stream is named", func(tl *timeline) {
			a := tl.callProgress("s1", 1, "tools/call", "t1").stream200().send(prime("a1"))
			b := tl.callProgress("s1", 2, "tools/call", "t2").stream200().send(prime("b1"))
			b.send(progress("b2", "t1"))
			a.send(resp("a2", 1)).end(observe.Complete)
			b.send(resp("b3", 2)).end(observe.Complete)
		}, is(checks.ServerMessagesOnOwnStream, report.StatusWarn, 1)},
		{"a request whose answer has not started has no stream of its own yet", func(tl *timeline) {
			g := tl.get("s1").stream200()
			x := tl.callProgress("s1", 1, "tools/call", "t1")
			g.send(progress("g1", "t1"))
			x.jsonAnswer("1")
			g.end(observe.ClientGone)
		}, excuses(checks.ServerMessagesOnOwnStream, "the request's own stream had not started (an answer in a JSON body has none)")},
	})
}

func TestCrossStreamReplayIsOneFailure(t *testing.T) {
	tl := lostResponse(t)
	tl.toolCall("s1", 2, "b1", "b2", "b3")
	// b1, another stream's priming event, written anew with data, and
	// call 2's response again: one leak.
	g := tl.get("s1", "a2").stream200()
	g.send(ev{id: "b1", data: "{}"}).send(resp("b3", 2)).send(note("a3")).send(resp("a4", 1)).end(observe.Complete)
	r := tl.final()
	expect(t, r, checks.ServerReplayIsolated, report.StatusFail, 2)
	expect(t, r, checks.ServerEventIDsUnique, report.StatusPass, 0)
	expectExcused(t, r, checks.E2ENoMessageDuplicated, "explained by server.replay-isolated")
}

func TestInconclusive(t *testing.T) {
	for _, tc := range []struct {
		name   string
		faults int // in the profile
		play   func(tl *timeline)
		want   want
	}{
		{"no traffic", 0, func(tl *timeline) {}, verdict(report.VerdictInconclusive, "no exchange went through fray")},
		{"every answer fray's own", 0, func(tl *timeline) {
			tl.call("", 0, "initialize").respond(502, false, "", origin(observe.FromFray)).end(observe.UpstreamFailed)
		}, verdict(report.VerdictInconclusive, "no exchange reached the upstream")},
		{"no request forwarded", 0, func(tl *timeline) {
			tl.request("GET", "/.well-known/oauth-protected-resource", mcp.StreamOther, "", "").respond(404, false, "").end(observe.Complete)
		}, verdict(report.VerdictInconclusive, "no JSON-RPC request")},
		{"a profile whose faults never fired", 2, func(tl *timeline) {
			tl.initialize("s1")
			tl.toolCall("s1", 1, "a1", "a2", "a3")
		}, verdict(report.VerdictInconclusive, "no fault fired")},
		{"a failure is a failure, however little was seen", 2, func(tl *timeline) {
			tl.initialize("s1")
			tl.call("s1", 1, "tools/call").respond(202, false, "").end(observe.Complete)
		}, verdict(report.VerdictFail, "")},
		{"enough traffic and a fault passes", 1, func(tl *timeline) {
			tl.initialize("s1")
			tl.call("s1", 1, "tools/call").stream200().send(prime("a1")).send(note("a2").as(observe.Dropped, fault(0, "drop"))).send(resp("a3", 1)).end(observe.Complete)
		}, verdict(report.VerdictPass, "")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := newTimeline(t, Options{Faults: tc.faults})
			tc.play(tl)
			tc.want(t, tl.final())
		})
	}
}

// cancelCall sends the client's notifications/cancelled for request id.
func (tl *timeline) cancelCall(session string, id int) *xch {
	x := tl.notify(session, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d,"reason":"timeout"}}`, id))
	return x.respond(202, false, "").end(observe.Complete)
}

// cutCall cuts a tools/call stream after its priming event and a
// progress notification, before the server sent the response.
func cutCall(t *testing.T) *timeline {
	tl := initialized(t)
	tl.call("s1", 1, "tools/call").stream200().
		send(primeRetry("a1", 200)).send(note("a2")).
		end(observe.FaultClosed)
	tl.wait(300 * ms)
	return tl
}

// silentResumption resumes cutCall's call and lets the resumed stream
// carry keep-alive blocks only, for 36 seconds.
func silentResumption(t *testing.T) (*timeline, *xch) {
	tl := cutCall(t)
	return tl, tl.get("s1", "a2").stream200().keepAlives(36)
}

// TestResumeSilenceThenCancel: a client that waited in vain on a resumed
// stream and then cancelled its request gave up on the silence; the
// silence is the server's failure whatever comes after the cancellation,
// and the unanswered request is its consequence, not the cancellation's.
func TestResumeSilenceThenCancel(t *testing.T) {
	for _, tt := range []struct {
		name  string
		after func(tl *timeline, g *xch)
	}{
		{"the server then ends the stream", func(tl *timeline, g *xch) { g.end(observe.Complete) }},
		{"the server then answers the cancelled request", func(tl *timeline, g *xch) {
			g.send(failed("a5", 1, 0, "Request cancelled")).end(observe.Complete)
		}},
		{"the client then leaves the stream", func(tl *timeline, g *xch) { g.end(observe.ClientGone) }},
		{"the client then exits with the stream open", func(tl *timeline, g *xch) {
			tl.v.ClientExited(report.Command{Args: []string{"client"}, ExitCode: 1})
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tl, g := silentResumption(t)
			c := tl.cancelCall("s1", 1)
			tt.after(tl, g)
			r := tl.final()
			f := expect(t, r, checks.ServerResumeContinues, report.StatusFail, 1)
			want := fmt.Sprintf("for 36s: request 1 (tools/call) still had no response when the client, having waited in vain, cancelled it (notifications/cancelled on exchange %d)", c.num)
			checkEvidence(t, f, func(e report.Evidence) bool { return e.Exchange != g.num || !strings.Contains(e.Message, want) })
			if e := check(t, r, checks.E2EEveryRequestAnswered); e.Count != 0 || excused(t, r, e.ID, "cancelled by the client") != 0 {
				t.Errorf("the request was excused by its cancellation, or failed again: %+v (excused %v)", e.Evidence, e.Excused)
			}
			expectNone(t, r, checks.ClientReconnects, checks.ClientLastEventID,
				checks.ServerRetryBeforeClose, checks.E2ENoMessageLost)
		})
	}
	t.Run("the unanswered request cites the silence", func(t *testing.T) {
		tl, g := silentResumption(t)
		tl.cancelCall("s1", 1)
		g.end(observe.Complete)
		expectExcused(t, tl.final(), checks.E2EEveryRequestAnswered, "explained by server.resume-continues")
	})
	tell(t, lostResponse, (*timeline).final, []story{
		{"a silence that replayed nothing of what was lost is one failure", func(tl *timeline) {
			g := tl.get("s1", "a2").stream200().keepAlives(36)
			tl.cancelCall("s1", 1)
			g.end(observe.Complete)
		}, all(is(checks.ServerResumeContinues, report.StatusFail, 1), excuses(checks.ServerReplayComplete, "explained by server.resume-continues"),
			excuses(checks.E2ENoMessageLost, "explained by server.resume-continues"), excuses(checks.E2EEveryRequestAnswered, "explained by server.resume-continues"))},
	})
	tell(t, cutCall, (*timeline).final, []story{
		{"a cancellation soon after resuming is the client's choice", func(tl *timeline) {
			g := tl.get("s1", "a2").stream200()
			tl.wait(300 * ms)
			tl.cancelCall("s1", 1)
			tl.wait(30 * time.Second)
			g.send(ev{noID: true}).end(observe.Complete)
		}, func(t *testing.T, r report.Report) {
			expectExcused(t, r, checks.ServerResumeContinues, "the client cancelled the request within a second of resuming")
			expectExcused(t, r, checks.E2EEveryRequestAnswered, "cancelled by the client")
			expectExcused(t, r, checks.ServerRetryBeforeClose, "ended after the client cancelled its request: no response was owed")
			expectNone(t, r, checks.ClientReconnects)
		}},
		{"a message before the cancellation passes", func(tl *timeline) {
			g := tl.get("s1", "a2").stream200().send(note("a3"))
			tl.wait(36 * time.Second)
			tl.cancelCall("s1", 1)
			g.end(observe.Complete)
		}, all(is(checks.ServerResumeContinues, report.StatusPass, 0), excuses(checks.E2EEveryRequestAnswered, "cancelled by the client"))},
	})
	t.Run("a request cancelled before its stream began owes nothing on it", func(t *testing.T) {
		tl := initialized(t)
		x := tl.call("s1", 1, "tools/call")
		tl.wait(100 * ms)
		tl.cancelCall("s1", 1)
		x.stream200().send(prime("a1")).end(observe.Complete)
		tl.wait(time.Minute)
		r := tl.final()
		expectExcused(t, r, checks.ServerRetryBeforeClose, "ended after the client cancelled its request: no response was owed")
		expect(t, r, checks.ClientReconnects, report.StatusSkip, 0)
		expectExcused(t, r, checks.E2EEveryRequestAnswered, "cancelled by the client")
	})
	for _, kind := range []string{"stall", "buffer", "delay"} {
		t.Run("silence behind a "+kind+" fault is fray's", func(t *testing.T) {
			tl := cutCall(t)
			g := tl.get("s1", "a2").stream200().send(ev{noID: true}.as(observe.Delivered, fault(1, kind)))
			tl.wait(36 * time.Second)
			tl.cancelCall("s1", 1)
			g.end(observe.ClientGone)
			r := tl.final()
			expectExcused(t, r, checks.ServerResumeContinues, "fray held the resumed stream back (a stall, delay or buffer fault): its silence may be fray's")
			expectExcused(t, r, checks.E2EEveryRequestAnswered, "cancelled by the client")
		})
	}
}
