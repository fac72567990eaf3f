package verify

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
)

func TestPrimingEvent(t *testing.T) {
	tell(t, initialized, (*timeline).final, []story{
		{"primed stream passes", func(tl *timeline) { tl.toolCall("s1", 1, "a1", "a2", "a3") },
			is(checks.ServerPrimingEvent, report.StatusPass, 0)},
		{"stream without priming fails", func(tl *timeline) {
			tl.call("s1", 1, "tools/call").stream200().send(note("a1")).send(resp("a2", 1)).end(observe.Complete)
		}, isWith(checks.ServerPrimingEvent, report.StatusWarn, 1, func(e report.Evidence) bool {
			return e.Message != "the stream answering POST tools/call (id 1) began with an event that had data"
		})},
		{"event without id fails", func(tl *timeline) {
			tl.call("s1", 1, "tools/call").stream200().send(noID(resp("", 1))).end(observe.Complete)
		}, is(checks.ServerPrimingEvent, report.StatusWarn, 1)},
		{"stream the server ends empty fails", func(tl *timeline) { tl.call("s1", 1, "tools/call").stream200().end(observe.Complete) },
			is(checks.ServerPrimingEvent, report.StatusWarn, 1)},
		{"drop-priming is not the server's doing", func(tl *timeline) {
			tl.call("s1", 1, "tools/call").stream200().
				send(prime("a1").as(observe.Dropped, fault(0, "drop-priming"))).
				send(resp("a2", 1)).end(observe.Complete)
		}, is(checks.ServerPrimingEvent, report.StatusPass, 0)},
		{"strip-id on the priming event is not the server's doing", func(tl *timeline) {
			e := prime("a1")
			e.delivered = strp("\x00strip")
			e.fired = append(e.fired, fault(0, "strip-id"))
			tl.call("s1", 1, "tools/call").stream200().send(e).send(resp("a2", 1)).end(observe.Complete)
		}, is(checks.ServerPrimingEvent, report.StatusPass, 0)},
		{"a close before the first event leaves it unjudged", func(tl *timeline) {
			tl.call("s1", 1, "tools/call").stream200(respFired(fault(0, "close"))).end(observe.FaultClosed)
		}, excuses(checks.ServerPrimingEvent, "the stream ended before its first event, not by the server")},
		{"a standalone GET stream the server closes without any id is a warning", func(tl *timeline) {
			tl.toolCall("s1", 1, "a1", "a2", "a3")
			g := tl.get("s1").stream200()
			g.send(ev{noID: true}) // a comment, as the Go SDK sends
			g.send(noID(note(""))).end(observe.Complete)
		}, all(is(checks.ServerPrimingEventGet, report.StatusWarn, 1), verdict(report.VerdictPass, ""))},
		{"an open standalone GET stream owes no priming event", func(tl *timeline) {
			g := tl.get("s1").stream200()
			g.send(ev{noID: true}).send(noID(note("")))
			tl.wait(time.Second)
			g.end(observe.ClientGone)
		}, is(checks.ServerPrimingEventGet, report.StatusSkip, 0)},
		{"a standalone GET stream that gave an id before the server closed it passes", func(tl *timeline) {
			tl.get("s1").stream200().send(note("g1")).end(observe.Complete)
		}, is(checks.ServerPrimingEventGet, report.StatusPass, 0)},
		{"a standalone GET stream the client's DELETE ended is not the server's polling", func(tl *timeline) {
			g := tl.get("s1").stream200()
			tl.request("DELETE", "/mcp", mcp.StreamOther, "s1", "").respond(200, false, "").end(observe.Complete)
			g.end(observe.Complete)
		}, is(checks.ServerPrimingEventGet, report.StatusSkip, 0)},
		{"a resumption owes none", func(tl *timeline) {
			tl.call("s1", 1, "tools/call").stream200().send(prime("a1")).end(observe.Complete)
			tl.wait(100 * ms)
			tl.get("s1", "a1").stream200().send(resp("a2", 1)).end(observe.Complete)
		}, all(is(checks.ServerPrimingEvent, report.StatusPass, 0), is(checks.ServerPrimingEventGet, report.StatusSkip, 0))},
	})
	t.Run("initialize and older revisions owe none", func(t *testing.T) {
		tl := newTimeline(t, Options{})
		tl.rev = "2025-06-18"
		x := tl.call("", 0, "initialize")
		x.session = "s1"
		x.respond(http.StatusOK, true, "s1").send(noID(resp("", 0)))
		tl.protocol["s1"] = tl.rev
		x.end(observe.Complete)
		tl.call("s1", 1, "tools/call").stream200().send(resp("a1", 1)).end(observe.Complete)
		r := tl.final()
		expectExcused(t, r, checks.ServerPrimingEvent, "no protocol revision negotiated for the stream")
		expectExcused(t, r, checks.ServerPrimingEvent, "protocol revision 2025-06-18 owes no priming event")
		expect(t, r, checks.ServerPrimingEvent, report.StatusSkip, 0)
	})
	t.Run("severity off skips it", func(t *testing.T) {
		tl := initializedWith(t, Options{Severity: map[string]checks.Severity{checks.ServerPrimingEvent: checks.Off}})
		tl.call("s1", 1, "tools/call").stream200().send(resp("a1", 1)).end(observe.Complete)
		r := tl.final()
		c := expect(t, r, checks.ServerPrimingEvent, report.StatusSkip, 0)
		if c.Severity != checks.Off || r.Verdict != report.VerdictPass {
			t.Errorf("severity %s, verdict %s", c.Severity, r.Verdict)
		}
	})
	t.Run("severity warning keeps the run passing", func(t *testing.T) {
		tl := initializedWith(t, Options{Severity: map[string]checks.Severity{checks.ServerPrimingEvent: checks.Warning}})
		tl.call("s1", 1, "tools/call").stream200().send(resp("a1", 1)).end(observe.Complete)
		r := tl.final()
		expect(t, r, checks.ServerPrimingEvent, report.StatusWarn, 1)
		expectVerdict(t, r, report.VerdictPass, "")
	})
}

func TestRetryBeforeClose(t *testing.T) {
	stripped := primeRetry("a1", 500)
	stripped.deliveredRetry = i64p(-1)
	stripped.fired = append(stripped.fired, fault(0, "strip-retry"))
	for _, tc := range []struct {
		name  string
		first ev // the stream's only event, before the end
		end   observe.Cause
		want  want
	}{
		{"retry sent before a server close passes", primeRetry("a1", 500), observe.Complete, is(checks.ServerRetryBeforeClose, report.StatusPass, 0)},
		{"a server close without retry warns", prime("a1"), observe.Complete,
			all(is(checks.ServerRetryBeforeClose, report.StatusWarn, 1), verdict(report.VerdictPass, ""))},
		{"strip-retry is not the server's doing", stripped, observe.Complete, is(checks.ServerRetryBeforeClose, report.StatusPass, 0)},
		{"a close by fray is not judged", prime("a1"), observe.FaultClosed, is(checks.ServerRetryBeforeClose, report.StatusSkip, 0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := initialized(t)
			tl.call("s1", 1, "tools/call").stream200().send(tc.first).end(tc.end)
			tl.wait(600 * ms)
			tl.get("s1", "a1").stream200().send(resp("a2", 1)).end(observe.Complete)
			tc.want(t, tl.final())
		})
	}
	t.Run("a stream ended after its response owes no retry", func(t *testing.T) {
		tl := initialized(t)
		tl.toolCall("s1", 1, "a1", "a2", "a3")
		expect(t, tl.final(), checks.ServerRetryBeforeClose, report.StatusSkip, 0)
	})
}

func TestEventIDsUnique(t *testing.T) {
	tell(t, initialized, (*timeline).final, []story{
		{"an id reused on a new stream fails", func(tl *timeline) {
			tl.toolCall("s1", 1, "a1", "a2", "a3")
			tl.toolCall("s1", 2, "b1", "a2", "b3")
		}, isWith(checks.ServerEventIDsUnique, report.StatusFail, 1, func(e report.Evidence) bool { return e.EventIDs[0] != "a2" || e.Related[0] != 2 })},
		{"ids in two sessions may be alike", func(tl *timeline) {
			tl.initialize("s2")
			tl.toolCall("s1", 1, "1", "2", "3")
			tl.toolCall("s2", 1, "1", "2", "3")
		}, is(checks.ServerEventIDsUnique, report.StatusPass, 0)},
		{"a replay repeats ids legitimately; rewrite-id is not the server's doing", func(tl *timeline) {
			e := note("a2")
			e.delivered = strp("a2-x")
			e.fired = append(e.fired, fault(1, "rewrite-id"))
			tl.call("s1", 1, "tools/call").stream200().send(prime("a1")).send(e).
				send(resp("a3", 1).as(observe.Lost, fault(0, "lose"))).end(observe.FaultClosed)
			tl.wait(500 * ms)
			tl.get("s1", "a2-x").stream200().send(note("a2")).send(resp("a3", 1)).end(observe.Complete)
		}, is(checks.ServerEventIDsUnique, report.StatusPass, 0)},
	})
}

// lostResponse runs a tools/call whose stream loses its last two events
// (a notification and the response) to a lose fault, and returns the
// timeline for the resumption.
func lostResponse(t *testing.T) *timeline {
	return lostResponseOn(newTimeline(t, Options{}))
}

// lostResponseOn plays lostResponse's opening on tl.
func lostResponseOn(tl *timeline) *timeline {
	tl.initialize("s1")
	tl.call("s1", 1, "tools/call").stream200().
		send(primeRetry("a1", 200)).send(note("a2")).
		send(note("a3").as(observe.Lost, fault(0, "lose"))).
		send(resp("a4", 1).as(observe.Lost)).
		end(observe.FaultClosed)
	tl.wait(300 * ms)
	return tl
}

func TestReplay(t *testing.T) {
	// rewritten resumes from a2 with a Last-Event-ID fray rewrote to leid.
	rewritten := func(tl *timeline, leid string) *xch {
		a := observe.RequestAction{LastEventIDChanged: true, HasForwardedLastEventID: true, ForwardedLastEventID: leid}
		return tl.getWith("s1", strp("a2"), action(a), fired(fault(3, "rewrite-last-event-id"))).stream200()
	}
	tell(t, lostResponse, (*timeline).final, []story{
		{"a complete replay passes everything", func(tl *timeline) {
			tl.get("s1", "a2").stream200().send(note("a3")).send(resp("a4", 1)).end(observe.Complete)
		}, func(t *testing.T, r report.Report) {
			for _, id := range []string{checks.ServerReplayComplete, checks.ServerReplayNoDuplicates, checks.ClientReconnects,
				checks.ClientLastEventID, checks.ClientRetryHonoured, checks.E2EEveryRequestAnswered, checks.E2ENoMessageLost} {
				expect(t, r, id, report.StatusPass, 0)
			}
			expectVerdict(t, r, report.VerdictPass, "")
		}},
		{"a replay that skips a lost event fails", func(tl *timeline) {
			tl.get("s1", "a2").stream200().send(resp("a4", 1)).send(note("a5")).end(observe.Complete)
		}, all(isWith(checks.ServerReplayComplete, report.StatusWarn, 1, func(e report.Evidence) bool {
			return len(e.EventIDs) != 1 || e.EventIDs[0] != "a3" || e.Fault == nil || e.Fault.Kind != "lose"
		}), is(checks.E2ENoMessageLost, report.StatusWarn, 1), is(checks.E2EEveryRequestAnswered, report.StatusPass, 0))},
		{"judged when the upstream ends the resumption", func(tl *timeline) { tl.get("s1", "a2").stream200().end(observe.Complete) },
			is(checks.ServerReplayComplete, report.StatusWarn, 1)},
		{"a resumption fray cuts first is not judged", func(tl *timeline) {
			tl.get("s1", "a2").stream200(respFired(fault(2, "close"))).end(observe.FaultClosed)
		}, excuses(checks.ServerReplayComplete, "the resumption was cut before its replay ended")},
		{"an id fray rewrote is not judged", func(tl *timeline) { rewritten(tl, "a20").end(observe.Complete) }, all(
			excuses(checks.ServerReplayComplete, "Last-Event-ID rewritten by fray"),
			excuses(checks.E2ENoMessageLost, "Last-Event-ID changed by fray"),
			excuses(checks.E2EEveryRequestAnswered, "Last-Event-ID changed by fray"),
			is(checks.ClientLastEventID, report.StatusPass, 0))},
		{"a stripped Last-Event-ID owes no replay", func(tl *timeline) {
			a := observe.RequestAction{LastEventIDChanged: true}
			g := tl.getWith("s1", strp("a2"), action(a), fired(fault(3, "strip-last-event-id"))).stream200()
			g.send(note("g1")).end(observe.Complete)
		}, all(is(checks.ServerReplayComplete, report.StatusSkip, 0), is(checks.ClientLastEventID, report.StatusPass, 0),
			excuses(checks.E2EEveryRequestAnswered, "Last-Event-ID changed by fray"))},
		{"replaying the event at Last-Event-ID is a duplicate", func(tl *timeline) {
			tl.get("s1", "a2").stream200().send(note("a2")).send(note("a3")).send(resp("a4", 1)).end(observe.Complete)
		}, all(is(checks.ServerReplayNoDuplicates, report.StatusWarn, 1), is(checks.ServerReplayComplete, report.StatusPass, 0),
			is(checks.ServerEventIDsUnique, report.StatusPass, 0))},
		{"an event replayed twice is a duplicate", func(tl *timeline) {
			tl.get("s1", "a2").stream200().send(note("a3")).send(note("a3")).send(resp("a4", 1)).end(observe.Complete)
		}, is(checks.ServerReplayNoDuplicates, report.StatusWarn, 1)},
		{"another stream's events are not replayed", func(tl *timeline) {
			tl.toolCall("s1", 2, "b1", "b2", "b3")
			tl.get("s1", "a2").stream200().send(note("a3")).send(note("b2")).send(resp("a4", 1)).end(observe.Complete)
		}, all(isWith(checks.ServerReplayIsolated, report.StatusFail, 1, func(e report.Evidence) bool {
			return e.Related[0] != 3 // exchange 3, where b2 was first sent
		}), is(checks.ServerEventIDsUnique, report.StatusPass, 0))},
		{"another session's events are not replayed", func(tl *timeline) {
			tl.initialize("s2")
			tl.toolCall("s2", 7, "x1", "x2", "x3")
			// A guessed id, set by a fault: the server must not leak s2's events.
			rewritten(tl, "x1").send(note("x2")).send(resp("a4", 1)).end(observe.Complete)
		}, is(checks.ServerReplayIsolated, report.StatusFail, 1)},
		{"a server that numbers events per session leaks nothing by replaying its own", func(tl *timeline) {
			// Both sessions were sent a1 to a4 (ids need be unique only within
			// a session); s1's replay ends with a5, which fray never saw on s1
			// and s2 got with the same data: s1's own, sent while its client
			// was away, or s2's, fray cannot tell.
			tl.initialize("s2")
			tl.call("s2", 1, "tools/call").stream200().
				send(primeRetry("a1", 200)).send(note("a2")).send(note("a3")).send(note("a5")).send(resp("a4", 1)).
				end(observe.Complete)
			tl.get("s1", "a2").stream200().send(note("a3")).send(resp("a4", 1)).send(note("a5")).end(observe.Complete)
		}, all(excuses(checks.ServerReplayIsolated, "ids are numbered per session: an event another session also had cannot be told from this session's own"),
			is(checks.ServerReplayComplete, report.StatusPass, 0), is(checks.ServerEventIDsUnique, report.StatusPass, 0))},
		{"the same ids and data in two sessions after the replay are not a leak", func(tl *timeline) {
			tl.initialize("s2")
			tl.toolCall("s2", 7, "x1", "x2", "x3")
			tl.get("s1", "a2").stream200().send(note("a3")).send(resp("a4", 1)).send(note("a5")).send(note("x2")).end(observe.Complete)
		}, is(checks.ServerReplayIsolated, report.StatusSkip, 0)},
	})
}

func TestUnknownSession404(t *testing.T) {
	tell(t, initialized, (*timeline).report, []story{
		{"an id never issued is answered 404", func(tl *timeline) {
			tl.call("bogus", 1, "tools/list").respond(404, false, "").end(observe.Complete)
		}, is(checks.ServerUnknownSession404, report.StatusPass, 0)},
		{"an id never issued answered 200 is a warning: no text asks for 404 there", func(tl *timeline) { tl.call("bogus", 1, "tools/list").jsonAnswer("1") },
			is(checks.ServerUnknownSession404, report.StatusWarn, 1)},
		{"a deleted session is answered 404", func(tl *timeline) {
			tl.request("DELETE", "/mcp", mcp.StreamOther, "s1", "").respond(200, false, "").end(observe.Complete)
			tl.wait(ms)
			tl.call("s1", 2, "tools/list").jsonAnswer("2")
			tl.get("s1").respond(404, false, "").end(observe.Complete)
		}, func(t *testing.T, r report.Report) {
			if c := expect(t, r, checks.ServerUnknownSession404, report.StatusFail, 1); c.Applied != 2 {
				t.Errorf("applied %d, want 2", c.Applied)
			}
		}},
		{"an issued session is not judged", func(tl *timeline) { tl.call("s1", 1, "tools/list").jsonAnswer("1") },
			is(checks.ServerUnknownSession404, report.StatusSkip, 0)},
		{"fray's own answers and stripped ids are not judged", func(tl *timeline) {
			tl.call("bogus", 1, "tools/list", action(observe.RequestAction{Answered: true}), fired(fault(0, "status"))).
				respond(200, false, "", origin(observe.FromFault), respFired(fault(0, "status"))).end(observe.FaultAnswered)
			tl.call("s1", 2, "tools/list", action(observe.RequestAction{StrippedHeaders: []string{"Mcp-Session-Id"}}), fired(fault(1, "strip-header"))).
				respond(400, false, "").end(observe.Complete)
		}, all(excuses(checks.ServerUnknownSession404, "Mcp-Session-Id removed by a strip-header fault"), is(checks.ServerUnknownSession404, report.StatusSkip, 0))},
	})
}

// TestOldIDsAreNotJudged: ids that left the ledger's window are neither
// blamed on the server (a resumption from one) nor on the client (sending
// one).
func TestOldIDsAreNotJudged(t *testing.T) {
	tl := initialized(t)
	g := tl.get("s1").stream200()
	for i := range idWindow + 10 {
		g.send(note(fmt.Sprintf("g%d", i)))
	}
	g.end(observe.Complete)
	tl.wait(time.Second)
	tl.get("s1", "g0").stream200().send(note("g-new")).end(observe.Complete)
	r := tl.final()
	expectExcused(t, r, checks.ServerReplayComplete, "Last-Event-ID older than the ledger's window, or never sent")
	expectExcused(t, r, checks.ClientLastEventID, "an id older than the ledger's window")
}

// TestHeldMessageReplayedFirst: a stream fray cut but read on (hold) may
// report what it read after the client's resumption already got the same
// message by replay; the message was not lost.
func TestHeldMessageReplayedFirst(t *testing.T) {
	for _, ids := range []struct{ name, resp string }{{"with an id", "a2"}, {"the response by its JSON-RPC id", ""}} {
		t.Run(ids.name, func(t *testing.T) {
			tl := initialized(t)
			held := tl.call("s1", 1, "tools/call").stream200().send(primeRetry("a1", 200))
			tl.wait(300 * ms)
			tl.get("s1", "a1").stream200().send(resp(ids.resp, 1)).end(observe.Complete)
			held.send(resp(ids.resp, 1).as(observe.Lost, fault(0, "close"))).end(observe.FaultClosed)
			r := tl.final()
			expect(t, r, checks.E2ENoMessageLost, report.StatusPass, 0)
			expect(t, r, checks.E2EEveryRequestAnswered, report.StatusPass, 0)
		})
	}
}

// TestReusedIDsReplayIsOneFailure: a server that counts every stream's
// ids from 1 fails server.event-ids-unique; a resumption that replays its
// own stream, under ids an earlier stream used, is no leak as well.
func TestReusedIDsReplayIsOneFailure(t *testing.T) {
	run := func(t *testing.T, opts Options, leak bool) report.Report {
		tl := initializedWith(t, opts)
		tl.callProgress("s1", 1, "tools/call", "t1").stream200().
			send(prime("1")).send(progress("2", "t1")).send(progress("3", "t1")).send(progress("4", "t1")).send(resp("5", 1)).end(observe.Complete)
		tl.callProgress("s1", 2, "tools/call", "t2").stream200().
			send(prime("1")).send(progress("2", "t2")).
			send(progress("3", "t2").as(observe.Lost, fault(0, "lose"))).end(observe.FaultClosed)
		tl.wait(time.Second)
		g := tl.get("s1", "2").stream200().send(progress("3", "t2"))
		if leak {
			// Stream 1's own event, id and data: a leak all the same.
			g.send(progress("4", "t1"))
		}
		g.send(progress("4", "t2")).send(resp("5", 2)).end(observe.Complete)
		return tl.final()
	}
	t.Run("the replay of its own stream is not a leak", func(t *testing.T) {
		r := run(t, Options{}, false)
		c := expect(t, r, checks.ServerEventIDsUnique, report.StatusFail, 5)
		if len(c.Evidence) > 0 && !strings.Contains(c.Evidence[0].Message, `event id "1" was used again on a new stream`) {
			t.Errorf("evidence %+v", c.Evidence[0])
		}
		expectExcused(t, r, checks.ServerReplayIsolated, "explained by server.event-ids-unique")
		expect(t, r, checks.ServerReplayComplete, report.StatusPass, 0)
		expect(t, r, checks.E2EEveryRequestAnswered, report.StatusPass, 0)
	})
	t.Run("another stream's event, id and data, is still a leak", func(t *testing.T) {
		expect(t, run(t, Options{}, true), checks.ServerReplayIsolated, report.StatusFail, 1)
	})
	t.Run("a reused id that only warns explains nothing", func(t *testing.T) {
		r := run(t, Options{Severity: map[string]checks.Severity{checks.ServerEventIDsUnique: checks.Warning}}, false)
		expect(t, r, checks.ServerReplayIsolated, report.StatusFail, 2)
	})
}

// TestSessionSurvivesRefusal: after a POST refused with a 4xx, a later
// POST of the session answered 5xx is a finding, one answered 2xx is
// not; a 404, 401, 403 or 429 sets nothing up, and neither does a 5xx
// with no refusal before it.
func TestSessionSurvivesRefusal(t *testing.T) {
	for _, tc := range []struct {
		name          string
		first, second int
		applied       bool
		found         bool
	}{
		{"400 then 503", http.StatusBadRequest, http.StatusServiceUnavailable, true, true},
		{"415 then 500", http.StatusUnsupportedMediaType, http.StatusInternalServerError, true, true},
		{"400 then 202", http.StatusBadRequest, http.StatusAccepted, true, false},
		{"404 then 503", http.StatusNotFound, http.StatusServiceUnavailable, false, false},
		{"429 then 503", http.StatusTooManyRequests, http.StatusServiceUnavailable, false, false},
		{"202 then 503", http.StatusAccepted, http.StatusServiceUnavailable, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := initialized(t)
			tl.notify("s1", `{"jsonrpc":"2.0","method":"notifications/progress"}`).respond(tc.first, false, "").end(observe.Complete)
			tl.notify("s1", `{"jsonrpc":"2.0","method":"notifications/progress"}`).respond(tc.second, false, "").end(observe.Complete)
			c := check(t, tl.report(), checks.ServerSessionSurvivesRefusal)
			if (c.Applied > 0) != tc.applied || (c.Count > 0) != tc.found {
				t.Errorf("applied %d, found %d; want applied %v, found %v", c.Applied, c.Count, tc.applied, tc.found)
			}
		})
	}
}
