package verify

import (
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
)

func TestEveryRequestAnswered(t *testing.T) {
	t.Run("an answer that never comes fails once the session is idle", func(t *testing.T) {
		tl := initialized(t)
		tl.wait(ms)
		tl.call("s1", 1, "tools/call").respond(202, false, "").end(observe.Complete)
		tl.wait(20 * time.Second)
		expect(t, tl.report(), checks.E2EEveryRequestAnswered, report.StatusPass, 0)
		tl.wait(11 * time.Second)
		c := expect(t, tl.report(), checks.E2EEveryRequestAnswered, report.StatusFail, 1)
		checkEvidence(t, c, func(e report.Evidence) bool { return e.Exchange != 2 || e.Session != 1 || e.AtMS != 1 })
	})
	t.Run("a shorter deadline judges sooner", func(t *testing.T) {
		tl := initializedWith(t, Options{AnswerDeadline: time.Second})
		tl.call("s1", 1, "tools/call").respond(202, false, "").end(observe.Complete)
		tl.wait(2 * time.Second)
		expect(t, tl.report(), checks.E2EEveryRequestAnswered, report.StatusFail, 1)
	})
	t.Run("a silent open stream is not judged until Final", func(t *testing.T) {
		tl := initialized(t)
		tl.call("s1", 1, "tools/call").stream200().send(prime("a1"))
		tl.wait(time.Minute)
		expect(t, tl.report(), checks.E2EEveryRequestAnswered, report.StatusPass, 0)
		expect(t, tl.final(), checks.E2EEveryRequestAnswered, report.StatusFail, 1)
	})
	tell(t, initialized, (*timeline).final, []story{
		{"an answer on the standalone stream counts", func(tl *timeline) {
			g := tl.get("s1").stream200().send(prime("g0"))
			tl.call("s1", 1, "tools/call").respond(202, false, "").end(observe.Complete)
			g.send(resp("g1", 1)).end(observe.Complete)
		}, is(checks.E2EEveryRequestAnswered, report.StatusPass, 0)},
		{"excused cases", func(tl *timeline) {
			tl.call("s1", 1, "tools/call", action(observe.RequestAction{Answered: true, Dropped: true}), fired(fault(0, "drop-request"))).
				respond(202, false, "", origin(observe.FromFault)).end(observe.FaultAnswered)
			tl.call("s1", 2, "tools/call").respond(500, false, "").end(observe.Complete)
			tl.call("s1", 3, "tools/call").stream200().send(prime("c1"))
			tl.notify("s1", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`).respond(202, false, "").end(observe.Complete)
			e := resp("d2", 5)
			e.corrupted = true
			e.fired = append(e.fired, fault(1, "corrupt"))
			tl.call("s1", 5, "tools/call").stream200().send(prime("d1")).send(e).end(observe.Complete)
		}, func(t *testing.T, r report.Report) {
			expect(t, r, checks.E2EEveryRequestAnswered, report.StatusPass, 0)
			for _, reason := range []string{"answered by fray (status or drop-request fault)", "answered with an HTTP error status",
				"cancelled by the client", "corrupted by fray"} {
				if excused(t, r, checks.E2EEveryRequestAnswered, reason) != 1 {
					t.Errorf("not excused once for %q: %+v", reason, check(t, r, checks.E2EEveryRequestAnswered).Excused)
				}
			}
			expectExcused(t, r, checks.E2ENoMessageLost, "corrupted by fray")
		}},
		{"a client that gives up is not answered", func(tl *timeline) { tl.call("s1", 1, "tools/call").end(observe.ClientGone) },
			isWith(checks.E2EEveryRequestAnswered, report.StatusFail, 1,
				says("the server sent no response; the client left the exchange before the answer"))},
	})
	t.Run("keep-alives are not progress", func(t *testing.T) {
		tl := initialized(t)
		tl.call("s1", 1, "tools/call").respond(202, false, "").end(observe.Complete)
		g := tl.get("s1").stream200().keepAlives(40)
		expect(t, tl.report(), checks.E2EEveryRequestAnswered, report.StatusFail, 1)
		g.end(observe.ClientGone)
	})
}

func TestNoMessageLost(t *testing.T) {
	tell(t, initialized, (*timeline).final, []story{
		{"dropped mid-stream while later ids were delivered", func(tl *timeline) {
			tl.call("s1", 1, "tools/call").stream200().send(prime("a1")).
				send(note("a2").as(observe.Dropped, fault(0, "drop"))).send(resp("a3", 1)).end(observe.Complete)
		}, all(excuses(checks.E2ENoMessageLost, "dropped mid-stream while later ids were delivered"), is(checks.E2ENoMessageLost, report.StatusPass, 0))},
		{"dropped, then resumed from before it and not replayed, fails", func(tl *timeline) {
			tl.call("s1", 1, "tools/call").stream200().send(prime("a1")).
				send(note("a2").as(observe.Dropped, fault(0, "drop"))).end(observe.FaultClosed)
			tl.wait(time.Second)
			tl.get("s1", "a1").stream200().send(resp("a3", 1)).end(observe.Complete)
			// Both warn: the replay's gap is a MAY the server did not keep,
			// and the lost notification breaks no MUST.
		}, all(is(checks.ServerReplayComplete, report.StatusWarn, 1), is(checks.E2ENoMessageLost, report.StatusWarn, 1), verdict(report.VerdictPass, ""))},
		{"a stream the client closed", func(tl *timeline) {
			tl.call("s1", 1, "tools/call").stream200().send(prime("a1")).
				send(resp("a2", 1).as(observe.Undelivered)).end(observe.ClientGone)
			// The request is not answered for all that: the client left.
		}, all(excuses(checks.E2ENoMessageLost, "the client closed the stream"), is(checks.E2EEveryRequestAnswered, report.StatusFail, 1))},
		{"stalled for ever", func(tl *timeline) {
			tl.call("s1", 1, "tools/call").stream200().send(prime("a1")).
				send(resp("a2", 1).as(observe.Stalled, fault(0, "stall"))).end(observe.ClientGone)
		}, excuses(checks.E2ENoMessageLost, "stalled for ever by fray")},
	})
	tell(t, lostResponse, (*timeline).final, []story{
		{"a loss the replay passed over is named by both checks", func(tl *timeline) {
			// The replay brings the response but not the notification the
			// server had sent before it, and the upstream breaks off: the
			// notification was passed over, not still coming.
			tl.get("s1", "a2").stream200().send(resp("a4", 1)).end(observe.UpstreamFailed)
		}, all(isWith(checks.E2ENoMessageLost, report.StatusWarn, 1, func(e report.Evidence) bool { return e.EventIDs[0] != "a3" || e.Fault == nil || e.Fault.Kind != "lose" }),
			isWith(checks.ServerReplayComplete, report.StatusWarn, 1, func(e report.Evidence) bool { return len(e.EventIDs) != 1 || e.EventIDs[0] != "a3" }),
			is(checks.E2EEveryRequestAnswered, report.StatusPass, 0))},
		{"a replay cut before it passed over anything is not judged", func(tl *timeline) {
			// The replay brings the notification, then the upstream breaks
			// off: the response may still have been coming.
			tl.get("s1", "a2").stream200().send(note("a3")).end(observe.UpstreamFailed)
		}, excuses(checks.ServerReplayComplete, "the resumption was cut before its replay ended")},
	})
	t.Run("a revision without resumability", func(t *testing.T) {
		tl := newTimeline(t, Options{})
		tl.rev = "2026-07-28"
		tl.initialize("s1")
		// 2026-07-28 has no sessions: the revision is each request's.
		tl.protocol[""] = tl.rev
		routed := header("Mcp-Method", "tools/call")
		tl.call("", 1, "tools/call", routed).stream200().send(noID(note(""))).
			send(noID(resp("", 1)).as(observe.Lost, fault(0, "lose"))).end(observe.FaultClosed)
		// The client re-issues the call under a new id (2026-07-28).
		tl.wait(50 * ms)
		tl.call("", 2, "tools/call", routed).stream200().send(noID(resp("", 2))).end(observe.Complete)
		tl.wait(time.Minute)
		r := tl.final()
		expectExcused(t, r, checks.E2ENoMessageLost, "protocol without resumability")
		expectExcused(t, r, checks.E2EEveryRequestAnswered, "a stream fray cut cancelled it (2026-07-28): the client re-issues it")
		expectExcused(t, r, checks.ClientReconnects, "protocol without resumability")
		expect(t, r, checks.ClientReissuesCutRequest, report.StatusPass, 0)
		expectVerdict(t, r, report.VerdictPass, "")
	})
}

func TestNoMessageDuplicated(t *testing.T) {
	tell(t, initialized, (*timeline).final, []story{
		{"copies made by a duplicate fault are excused", func(tl *timeline) {
			e := resp("a2", 1)
			e.copies = 3
			e.fired = append(e.fired, fault(0, "duplicate"))
			tl.call("s1", 1, "tools/call").stream200().send(prime("a1")).send(e).end(observe.Complete)
		}, func(t *testing.T, r report.Report) {
			expect(t, r, checks.E2ENoMessageDuplicated, report.StatusPass, 0)
			if n := excused(t, r, checks.E2ENoMessageDuplicated, "copies made by fray's duplicate fault"); n != 2 {
				t.Errorf("excused %d copies, want 2", n)
			}
		}},
		{"a response the server sent twice fails", func(tl *timeline) {
			tl.call("s1", 1, "tools/call").stream200().send(prime("a1")).send(resp("a2", 1)).send(resp("a3", 1)).end(observe.Complete)
		}, isWith(checks.E2ENoMessageDuplicated, report.StatusFail, 1, func(e report.Evidence) bool { return e.Exchange != 2 || e.Session != 1 })},
		{"a request forwarded twice may be answered twice", func(tl *timeline) {
			tl.call("s1", 1, "tools/call").stream200().send(prime("a1")).end(observe.FaultReset)
			tl.call("s1", 1, "tools/call").stream200().send(prime("b1")).send(resp("b2", 1)).end(observe.Complete)
			tl.wait(time.Second)
			tl.get("s1", "a1").stream200().send(resp("a2", 1)).end(observe.Complete)
		}, is(checks.E2ENoMessageDuplicated, report.StatusPass, 0)},
		{"a replay after fray changed Last-Event-ID is excused", func(tl *timeline) {
			tl.call("s1", 1, "tools/call").stream200().send(prime("a1")).send(resp("a2", 1)).end(observe.Complete)
			tl.wait(time.Second)
			a := observe.RequestAction{LastEventIDChanged: true, HasForwardedLastEventID: true, ForwardedLastEventID: "a1"}
			tl.getWith("s1", nil, action(a), fired(fault(0, "rewrite-last-event-id"))).stream200().send(resp("a2", 1)).end(observe.Complete)
		}, all(excuses(checks.E2ENoMessageDuplicated, "replayed after fray changed Last-Event-ID"), is(checks.ServerReplayNoDuplicates, report.StatusPass, 0))},
	})
}
