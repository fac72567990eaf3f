package verify

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
)

// status503 is a resumption answered 503 by a status fault.
func (tl *timeline) status503(session, leid string) {
	a := observe.RequestAction{Answered: true}
	f := fault(5, "status")
	tl.getWith(session, strp(leid), action(a), fired(f)).
		respond(503, false, "", origin(observe.FromFault), respFired(f)).end(observe.FaultAnswered)
}

func TestReconnects(t *testing.T) {
	tell(t, lostResponse, (*timeline).report, []story{
		{"a client that never comes back fails", func(tl *timeline) { tl.wait(31 * time.Second) }, all(
			isWith(checks.ClientReconnects, report.StatusWarn, 1, func(e report.Evidence) bool {
				return e.Exchange != 2 || e.EventIDs[0] != "a2" || e.Fault == nil || e.Fault.Kind != "lose" || e.Session != 1
			}),
			// A SHOULD the client broke explains nothing away: the request
			// it never got the answer to fails the run, and says why.
			isWith(checks.E2EEveryRequestAnswered, report.StatusFail, 1, says("the client did not reconnect for it")),
			verdict(report.VerdictFail, ""))},
		{"not judged before the deadline", func(tl *timeline) { tl.wait(10 * time.Second) }, is(checks.ClientReconnects, report.StatusSkip, 0)},
		{"a client that deletes its session instead of reconnecting is judged by what it did", func(tl *timeline) {
			tl.wait(ms)
			tl.request("DELETE", "/mcp", mcp.StreamOther, "s1", "").respond(200, false, "").end(observe.Complete)
		}, all(isWith(checks.ClientReconnects, report.StatusWarn, 1, says("before it deleted the session")),
			isWith(checks.E2EEveryRequestAnswered, report.StatusFail, 1, says("the client deleted the session")))},
		{"a session the server ends owes nothing", func(tl *timeline) {
			tl.getWith("s1", strp("a2")).respond(404, false, "").end(observe.Complete)
			tl.wait(31 * time.Second)
		}, all(excuses(checks.ClientReconnects, "the session was answered 404"), excuses(checks.E2EEveryRequestAnswered, "the session was answered 404"))},
		{"two attempts refused by fray, then giving up, is excused", func(tl *timeline) {
			tl.status503("s1", "a2")
			tl.wait(400 * ms)
			tl.status503("s1", "a2")
			tl.wait(31 * time.Second)
		}, all(excuses(checks.ClientReconnects, "the client gave up after two failed attempts"),
			excuses(checks.E2EEveryRequestAnswered, "reconnection refused by fray"), is(checks.ClientReconnects, report.StatusPass, 0))},
		{"giving up after one transient error is named", func(tl *timeline) {
			tl.status503("s1", "a2")
			tl.wait(31 * time.Second)
		}, all(is(checks.ClientReconnects, report.StatusPass, 0), isWith(checks.ClientRetriesTransient, report.StatusWarn, 1, func(e report.Evidence) bool {
			return e.Fault == nil || e.Fault.Kind != "status" || !strings.Contains(e.Message, "503")
		}))},
	})
	tell(t, lostResponse, (*timeline).final, []story{
		{"Final judges a client late beyond the grace", func(tl *timeline) { tl.wait(2 * time.Second) }, is(checks.ClientReconnects, report.StatusWarn, 1)},
		{"a client that exited owes what it never did", func(tl *timeline) {
			tl.v.ClientExited(report.Command{Args: []string{"client"}, ExitCode: 1})
		}, func(t *testing.T, r report.Report) {
			checkEvidence(t, expect(t, r, checks.ClientReconnects, report.StatusWarn, 1), says("before it exited"))
			expect(t, r, checks.E2EEveryRequestAnswered, report.StatusFail, 1)
			if r.Command == nil || r.Verdict != report.VerdictFail || !strings.Contains(r.Why, "the client command failed: exit code 1") {
				t.Errorf("verdict %s (%s), command %+v", r.Verdict, r.Why, r.Command)
			}
		}},
		{"Final excuses a client still inside its wait", func(tl *timeline) {},
			excuses(checks.ClientReconnects, "the run ended while the client waited to reconnect")},
	})
	t.Run("a check at error severity explains the consequence away", func(t *testing.T) {
		tl := newTimeline(t, Options{Severity: map[string]checks.Severity{checks.ClientReconnects: checks.Error}})
		lostResponseOn(tl)
		tl.wait(31 * time.Second)
		r := tl.report()
		expect(t, r, checks.ClientReconnects, report.StatusFail, 1)
		expectExcused(t, r, checks.E2EEveryRequestAnswered, "explained by client.reconnects")
		expectExcused(t, r, checks.E2ENoMessageLost, "explained by client.reconnects")
	})
	t.Run("no id delivered: drop-priming excuses it", func(t *testing.T) {
		tl := initialized(t)
		tl.call("s1", 1, "tools/call").stream200().
			send(prime("a1").as(observe.Dropped, fault(0, "drop-priming"))).
			send(resp("a2", 1).as(observe.Cut, fault(1, "close"))).end(observe.FaultClosed)
		tl.wait(31 * time.Second)
		r := tl.report()
		expectExcused(t, r, checks.ClientReconnects, "no id delivered to resume from: fray kept the ids back (drop-priming)")
		expectExcused(t, r, checks.E2EEveryRequestAnswered, "no id delivered to resume from")
		expectExcused(t, r, checks.E2ENoMessageLost, "no id delivered to resume from")
		expectVerdict(t, r, report.VerdictPass, "")
	})
	// The standalone stream, given up after one transient error, then
	// tried again.
	tell(t, initialized, (*timeline).final, []story{
		{"the standalone stream given up after one transient error is named", func(tl *timeline) {
			tl.get("s1").stream200().send(prime("g1")).end(observe.Complete)
			tl.wait(200 * ms)
			tl.status503("s1", "g1")
			tl.v.ClientExited(report.Command{Args: []string{"client"}})
		}, is(checks.ClientRetriesTransient, report.StatusWarn, 1)},
		{"a second try after a transient error passes", func(tl *timeline) {
			tl.get("s1").stream200().send(prime("g1")).end(observe.Complete)
			tl.wait(200 * ms)
			tl.status503("s1", "g1")
			tl.wait(time.Second)
			tl.get("s1", "g1").stream200().send(note("g2")).end(observe.ClientGone)
			tl.v.ClientExited(report.Command{Args: []string{"client"}})
		}, is(checks.ClientRetriesTransient, report.StatusSkip, 0)},
	})
}

func TestLastEventID(t *testing.T) {
	tell(t, lostResponse, (*timeline).final, []story{
		{"an older id fails", func(tl *timeline) {
			tl.get("s1", "a1").stream200().send(note("a2")).send(note("a3")).send(resp("a4", 1)).end(observe.Complete)
		}, all(isWith(checks.ClientLastEventID, report.StatusWarn, 1, func(e report.Evidence) bool { return e.EventIDs[0] != "a1" || e.EventIDs[1] != "a2" }),
			is(checks.ClientReconnects, report.StatusPass, 0))},
		{"what the client sent is judged, not what fray forwarded", func(tl *timeline) {
			a := observe.RequestAction{LastEventIDChanged: true, HasForwardedLastEventID: true, ForwardedLastEventID: "zz"}
			tl.getWith("s1", strp("a2"), action(a), fired(fault(3, "rewrite-last-event-id"))).stream200().end(observe.Complete)
		}, is(checks.ClientLastEventID, report.StatusPass, 0)},
	})
	tell(t, initialized, (*timeline).final, []story{
		{"an empty id resets it", func(tl *timeline) {
			tl.call("s1", 1, "tools/call").stream200().send(prime("a1")).send(ev{id: ""}).end(observe.FaultClosed)
			tl.wait(time.Second)
			tl.get("s1", "a1").stream200().send(resp("a2", 1)).end(observe.Complete)
		}, all(is(checks.ClientLastEventID, report.StatusWarn, 1), excuses(checks.ClientReconnects, "no id delivered to resume from"))},
		{"a dropped event's id does not count", func(tl *timeline) {
			tl.call("s1", 1, "tools/call").stream200().send(prime("a1")).
				send(note("a2").as(observe.Dropped, fault(0, "drop"))).
				send(resp("a3", 1).as(observe.Cut, fault(1, "close"))).end(observe.FaultClosed)
			tl.wait(time.Second)
			tl.get("s1", "a1").stream200().send(note("a2")).send(resp("a3", 1)).end(observe.Complete)
		}, all(is(checks.ClientLastEventID, report.StatusPass, 0), is(checks.E2ENoMessageLost, report.StatusPass, 0))},
		{"an id never delivered fails", func(tl *timeline) {
			tl.call("s1", 1, "tools/call").stream200().send(prime("a1")).
				send(note("a2").as(observe.Lost, fault(0, "lose"))).end(observe.FaultClosed)
			tl.wait(time.Second)
			tl.get("s1", "a2").stream200().end(observe.Complete)
		}, isWith(checks.ClientLastEventID, report.StatusWarn, 1, func(e report.Evidence) bool {
			return e.Message != `GET carried Last-Event-ID "a2", which fray never delivered in this session; the last id delivered on exchange 2 was "a1"`
		})},
		{"a GET without the id, then a proper resumption: the first was the standalone stream", func(tl *timeline) {
			tl.call("s1", 1, "tools/call").stream200().send(prime("a1")).end(observe.Complete)
			tl.wait(ms)
			tl.get("s1").respond(405, false, "").end(observe.Complete)
			tl.wait(time.Second)
			tl.get("s1", "a1").stream200().send(resp("a2", 1)).end(observe.Complete)
			tl.v.ClientExited(report.Command{Args: []string{"client"}})
		}, all(is(checks.ClientLastEventID, report.StatusPass, 0), is(checks.E2EEveryRequestAnswered, report.StatusPass, 0))},
		{"an id a server replayed into another stream resumes the stream whose last id it is", func(tl *timeline) {
			// Stream A (call 1) and B (call 2) are both cut; B's last id b2
			// is replayed into A's resumption, as server-everything does.
			tl.call("s1", 1, "tools/call").stream200().send(prime("a1")).end(observe.Complete)
			tl.call("s1", 2, "tools/call").stream200().send(prime("b1")).send(note("b2")).end(observe.Complete)
			tl.wait(time.Second)
			tl.get("s1", "a1").stream200().send(note("b2")).send(resp("a3", 1)).end(observe.Complete)
			tl.wait(time.Second)
			tl.get("s1", "b2").stream200().send(resp("b3", 2)).end(observe.Complete)
		}, all(is(checks.ClientLastEventID, report.StatusPass, 0), is(checks.ServerReplayIsolated, report.StatusFail, 1))},
	})
	tell(t, initialized, (*timeline).report, []story{
		{"an id fray rewrote is the one owed", func(tl *timeline) {
			e := prime("a1")
			e.delivered = strp("_GET_a1")
			e.fired = []faults.Firing{fault(0, "rewrite-id")}
			tl.call("s1", 1, "tools/call").stream200().send(e).end(observe.FaultClosed)
			tl.wait(time.Second)
			tl.get("s1", "_GET_a1").stream200().end(observe.Complete)
			tl.wait(31 * time.Second)
		}, all(is(checks.ClientLastEventID, report.StatusPass, 0), excuses(checks.E2EEveryRequestAnswered, "resumed from an id fray rewrote"),
			excuses(checks.ServerReplayComplete, "resumed from an id fray rewrote"))},
		{"a GET to another path is not a reconnection", func(tl *timeline) {
			tl.get("s1").stream200().send(ev{noID: true})
			tl.call("s1", 1, "tools/call").stream200().send(prime("a1")).end(observe.FaultClosed)
			tl.wait(time.Second)
			tl.request("GET", "/health", mcp.StreamGet, "s1", "").respond(200, false, "").end(observe.Complete)
			tl.wait(31 * time.Second)
		}, all(is(checks.ClientLastEventID, report.StatusSkip, 0), is(checks.ClientReconnects, report.StatusWarn, 1))},
	})
	t.Run("a GET without the id while the standalone stream is open fails at once", func(t *testing.T) {
		tl := initialized(t)
		standalone := tl.get("s1").stream200()
		tl.call("s1", 1, "tools/call").stream200().send(prime("a1")).end(observe.FaultClosed)
		tl.wait(time.Second)
		tl.get("s1").respond(409, false, "").end(observe.Complete)
		r := tl.report()
		expect(t, r, checks.ClientLastEventID, report.StatusWarn, 1)
		expect(t, r, checks.ClientReconnects, report.StatusPass, 0)
		standalone.end(observe.ClientGone)
	})
	t.Run("a GET without the id is judged when the reconnection falls due", func(t *testing.T) {
		tl := initialized(t)
		tl.call("s1", 1, "tools/call").stream200().send(prime("a1")).end(observe.FaultClosed)
		tl.wait(time.Second)
		g := tl.get("s1").stream200()
		if r := tl.report(); check(t, r, checks.ClientLastEventID).Count != 0 {
			t.Fatalf("judged before the deadline")
		}
		tl.wait(31 * time.Second)
		g.send(ev{noID: true})
		tl.wait(time.Second)
		r := tl.report()
		checkEvidence(t, expect(t, r, checks.ClientLastEventID, report.StatusWarn, 1), from(g.num))
		expect(t, r, checks.ClientReconnects, report.StatusPass, 0)
	})
	t.Run("a GET sent before the stream was cut is not its reconnection", func(t *testing.T) {
		// The standalone GET's answer is observed after the cut of a
		// call it was sent before, as happens when its goroutine is
		// slower: it is the standalone stream, and the client, which
		// did not come back, owes a reconnection still.
		tl := initialized(t)
		g := tl.get("s1")
		tl.wait(time.Millisecond)
		tl.call("s1", 1, "tools/call").stream200().send(prime("a1")).end(observe.FaultClosed)
		g.stream200().send(ev{noID: true})
		tl.wait(31 * time.Second)
		r := tl.report()
		expect(t, r, checks.ClientLastEventID, report.StatusSkip, 0)
		checkEvidence(t, expect(t, r, checks.ClientReconnects, report.StatusWarn, 1), func(e report.Evidence) bool {
			return e.Exchange == g.num // the standalone GET, not a reconnection
		})
		g.end(observe.ClientGone)
	})
	t.Run("a GET without the id is the reconnection whatever the server answers", func(t *testing.T) {
		for _, status := range []int{405, 400, 409, 503} {
			tl := initialized(t)
			tl.call("s1", 1, "tools/call").stream200().send(prime("a1")).end(observe.Complete)
			tl.wait(time.Second)
			g := tl.get("s1").respond(status, false, "").end(observe.Complete)
			// The client exits at once, before its reconnection fell due:
			// what it did is known.
			tl.v.ClientExited(report.Command{Args: []string{"client"}})
			r := tl.final()
			c := expect(t, r, checks.ClientLastEventID, report.StatusWarn, 1)
			if len(c.Evidence) == 1 && c.Evidence[0].Exchange != g.num {
				t.Errorf("%d: evidence names exchange %d, want the GET %d", status, c.Evidence[0].Exchange, g.num)
			}
			expect(t, r, checks.ClientReconnects, report.StatusPass, 0)
			if a := check(t, r, checks.E2EEveryRequestAnswered); a.Status != report.StatusFail || len(a.Evidence) != 1 ||
				!strings.Contains(a.Evidence[0].Message, "client.last-event-id") {
				t.Errorf("%d: every-request-answered %s %+v", status, a.Status, a.Evidence)
			}
		}
	})
}

func TestRetryHonoured(t *testing.T) {
	for _, tc := range []struct {
		name string
		// The priming event's retry from the upstream and as delivered
		// (-1: none delivered), and the fault that changed it.
		upstream, delivered int64
		fired               []faults.Firing
		after               time.Duration // before the client resumes
		want                want
	}{
		{"waiting the retry passes", 500, 500, nil, 520 * ms, is(checks.ClientRetryHonoured, report.StatusPass, 0)},
		{"within the tolerance passes", 500, 500, nil, 460 * ms, is(checks.ClientRetryHonoured, report.StatusPass, 0)},
		{"coming back early fails", 500, 500, nil, 100 * ms, isWith(checks.ClientRetryHonoured, report.StatusFail, 1, func(e report.Evidence) bool {
			return e.Message != "reconnected 100ms after the stream ended; retry was 500ms"
		})},
		{"coming back much later is no finding: retry is a minimum", 500, 500, nil, 1500 * ms,
			all(is(checks.ClientRetryHonoured, report.StatusPass, 0), verdict(report.VerdictPass, ""))},
		{"a retry set by fray is owed, and named", 0, 500, []faults.Firing{fault(2, "set-retry")}, 100 * ms,
			isWith(checks.ClientRetryHonoured, report.StatusFail, 1, func(e report.Evidence) bool {
				return e.Fault == nil || e.Fault.Kind != "set-retry"
			})},
		{"a retry fray stripped is not owed", 500, -1, []faults.Firing{fault(2, "strip-retry")}, 10 * ms,
			all(is(checks.ClientRetryHonoured, report.StatusSkip, 0), is(checks.ClientBackoff, report.StatusPass, 0))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := initialized(t)
			e := primeRetry("a1", tc.upstream)
			e.deliveredRetry = i64p(tc.delivered)
			e.fired = tc.fired
			tl.call("s1", 1, "tools/call").stream200().send(e).end(observe.Complete)
			tl.wait(tc.after)
			tl.get("s1", "a1").stream200().send(resp("a2", 1)).end(observe.Complete)
			tc.want(t, tl.final())
		})
	}
}

func TestBackoff(t *testing.T) {
	for _, tc := range []struct {
		name string
		gaps []time.Duration // before each resumption answered 503
		want want
	}{
		{"a storm warns", []time.Duration{10 * ms, 10 * ms, 10 * ms},
			isWith(checks.ClientBackoff, report.StatusWarn, 1, func(e report.Evidence) bool { return e.Fault == nil || len(e.Related) < 3 })},
		{"growing delays pass", []time.Duration{150 * ms, 300 * ms, 600 * ms}, is(checks.ClientBackoff, report.StatusPass, 0)},
		{"two fast attempts are not yet a storm", []time.Duration{10 * ms, 10 * ms}, is(checks.ClientBackoff, report.StatusPass, 0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := initialized(t)
			tl.call("s1", 1, "tools/call").stream200().send(prime("a1")).end(observe.FaultClosed)
			for _, g := range tc.gaps {
				tl.wait(g)
				tl.status503("s1", "a1")
			}
			tl.wait(time.Second)
			tl.get("s1", "a1").stream200().send(resp("a2", 1)).end(observe.Complete)
			tc.want(t, tl.final())
		})
	}
	t.Run("severity error fails the run", func(t *testing.T) {
		tl := initializedWith(t, Options{Severity: map[string]checks.Severity{checks.ClientBackoff: checks.Error}})
		tl.call("s1", 1, "tools/call").stream200().send(prime("a1")).end(observe.FaultClosed)
		for range 3 {
			tl.wait(5 * ms)
			tl.status503("s1", "a1")
		}
		r := tl.final()
		expect(t, r, checks.ClientBackoff, report.StatusFail, 1)
		expectVerdict(t, r, report.VerdictFail, "")
	})
}

// gone404 answers a tools/call in session s1 with 404 from a status fault.
func gone404(tl *timeline) {
	f := fault(4, "status")
	tl.call("s1", 5, "tools/call", action(observe.RequestAction{Answered: true}), fired(f)).
		respond(404, false, "", origin(observe.FromFault), respFired(f)).end(observe.FaultAnswered)
}

func TestNewSessionAfter404(t *testing.T) {
	gone := func(t *testing.T) *timeline {
		tl := initialized(t)
		gone404(tl)
		return tl
	}
	tell(t, gone, (*timeline).report, []story{
		{"a new session passes", func(tl *timeline) {
			tl.wait(10 * ms)
			tl.initialize("s2")
			tl.call("s2", 1, "tools/call").jsonAnswer("1")
		}, all(is(checks.ClientNewSessionAfter404, report.StatusPass, 0),
			excuses(checks.E2EEveryRequestAnswered, "answered by fray (status or drop-request fault)"))},
		{"the dead id sent again fails", func(tl *timeline) {
			tl.wait(10 * ms)
			tl.call("s1", 6, "tools/call").respond(404, false, "").end(observe.Complete)
			tl.initialize("s2")
		}, isWith(checks.ClientNewSessionAfter404, report.StatusFail, 1, func(e report.Evidence) bool { return e.Session != 1 || len(e.Related) != 1 })},
		{"a DELETE of the dead id is allowed", func(tl *timeline) {
			tl.wait(10 * ms)
			tl.request("DELETE", "/mcp", mcp.StreamOther, "s1", "").respond(404, false, "").end(observe.Complete)
			tl.initialize("s2")
		}, is(checks.ClientNewSessionAfter404, report.StatusPass, 0)},
		{"no initialize within the deadline fails", func(tl *timeline) { tl.wait(31 * time.Second) },
			isWith(checks.ClientNewSessionAfter404, report.StatusFail, 1, func(e report.Evidence) bool { return e.Fault == nil || e.Fault.Kind != "status" })},
	})
	tell(t, gone, (*timeline).final, []story{
		{"Final excuses a run that ended right after the 404", func(tl *timeline) { tl.wait(100 * ms) },
			excuses(checks.ClientNewSessionAfter404, "the run ended soon after the 404")},
	})
	t.Run("the old session's Last-Event-ID carried into the new one fails", func(t *testing.T) {
		tl := initialized(t)
		tl.call("s1", 1, "tools/call").stream200().send(prime("a1")).end(observe.FaultClosed)
		tl.wait(time.Second)
		tl.get("s1", "a1").respond(404, false, "").end(observe.Complete)
		tl.initialize("s2")
		tl.get("s2", "a1").respond(400, false, "").end(observe.Complete)
		r := tl.report()
		expect(t, r, checks.ClientNewSessionAfter404, report.StatusFail, 1)
		expect(t, r, checks.ClientLastEventID, report.StatusPass, 0)
		expectExcused(t, r, checks.E2EEveryRequestAnswered, "the session was answered 404")
	})
}

// legacyStream opens a 2024-11-05 stream on /sse whose endpoint names
// session sid.
func (tl *timeline) legacyStream(sid string) *xch {
	x := tl.request("GET", "/sse", mcp.StreamGet, "", "")
	x.stream, x.session = mcp.StreamLegacy, sid
	x.respond(http.StatusOK, true, "")
	x.send(ev{noID: true, typ: "endpoint", data: "/messages?sessionId=" + sid})
	return x
}

func (tl *timeline) legacyCall(sid string, id int) {
	body := `{"jsonrpc":"2.0","id":` + string(rune('0'+id)) + `,"method":"tools/call"}`
	tl.request("POST", "/messages", mcp.StreamLegacy, sid, body).respond(202, false, "").end(observe.Complete)
}

func TestLegacy(t *testing.T) {
	tell(t, fresh, (*timeline).final, []story{
		{"answers on the stream pass", func(tl *timeline) {
			s := tl.legacyStream("L1")
			tl.legacyCall("L1", 1)
			s.send(noID(resp("", 1)))
			s.end(observe.ClientGone)
		}, all(is(checks.E2EEveryRequestAnswered, report.StatusPass, 0), is(checks.ServerPrimingEventGet, report.StatusSkip, 0),
			is(checks.ServerUnknownSession404, report.StatusSkip, 0), verdict(report.VerdictPass, ""))},
		{"a request whose answer stream is open when the run ends is not yet due", func(tl *timeline) {
			tl.legacyStream("L1")
			tl.legacyCall("L1", 1)
			tl.wait(300 * ms)
		}, excuses(checks.E2EEveryRequestAnswered, "the run ended before its answer was due, its answer stream still open")},
		{"past its deadline it is unanswered, stream open or not", func(tl *timeline) {
			tl.legacyStream("L1")
			tl.legacyCall("L1", 1)
			tl.wait(31 * time.Second)
		}, is(checks.E2EEveryRequestAnswered, report.StatusFail, 1)},
		{"a lost stream with a request pending owes a new stream", func(tl *timeline) {
			s := tl.legacyStream("L1")
			tl.legacyCall("L1", 1)
			s.send(noID(resp("", 1)).as(observe.Cut, fault(0, "reset"))).end(observe.FaultReset)
			tl.wait(time.Second)
			tl.legacyStream("L2").end(observe.ClientGone)
		}, all(is(checks.ClientReconnects, report.StatusPass, 0), excuses(checks.E2EEveryRequestAnswered, "legacy stream lost: the session ended with it"),
			excuses(checks.E2ENoMessageLost, "legacy transport"))},
	})
	tell(t, fresh, (*timeline).report, []story{
		{"a client that does not open a new stream is named", func(tl *timeline) {
			s := tl.legacyStream("L1")
			tl.legacyCall("L1", 1)
			s.end(observe.FaultClosed)
			tl.wait(31 * time.Second)
		}, is(checks.ClientReconnects, report.StatusWarn, 1)},
	})
}

// TestCameBackWithAnotherID: a client that comes back for a cut stream
// with a Last-Event-ID that stream never delivered came back: the
// evidence says with what, client.reconnects does not say it never did,
// and the unanswered request cites client.last-event-id.
func TestCameBackWithAnotherID(t *testing.T) {
	for _, tt := range []struct {
		name string
		// play leaves session s2's call 3 cut after "b2" and returns the
		// session the client comes back in.
		play func(tl *timeline) string
		want string
	}{
		{"an id of another stream of the session", func(tl *timeline) string {
			tl.initialize("s2")
			tl.toolCall("s2", 1, "a1", "a2", "a3")
			tl.call("s2", 3, "tools/call").stream200().send(primeRetry("b1", 100)).send(note("b2")).end(observe.FaultClosed)
			return "s2"
		}, `the client came back for the stream of exchange 3 with Last-Event-ID "a2", which that stream never delivered (it was delivered on another stream of the session, exchange 2, which owed nothing more); the last id delivered on it was "b2"`},
		{"an id of a session answered 404", func(tl *timeline) string {
			tl.initialize("s1")
			tl.toolCall("s1", 1, "a1", "a2", "a3")
			tl.call("s1", 2, "tools/call").respond(404, false, "").end(observe.Complete)
			tl.wait(ms)
			tl.initialize("s2")
			tl.call("s2", 3, "tools/call").stream200().send(primeRetry("b1", 100)).send(note("b2")).end(observe.FaultClosed)
			return "s2"
		}, `the client came back for the stream of exchange 5 with Last-Event-ID "a2", which that stream never delivered (it belongs to session 1, which was answered 404); the last id delivered on it was "b2"`},
		{"an id of another live session", func(tl *timeline) string {
			tl.initialize("s1")
			tl.toolCall("s1", 1, "a1", "a2", "a3")
			tl.initialize("s2")
			tl.call("s2", 3, "tools/call").stream200().send(primeRetry("b1", 100)).send(note("b2")).end(observe.FaultClosed)
			return "s2"
		}, `GET carried Last-Event-ID "a2", which belongs to session 1: fray never delivered it in this one; the last id delivered on exchange 4 was "b2"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tl := newTimeline(t, Options{})
			s := tt.play(tl)
			tl.wait(time.Second)
			g := tl.get(s, "a2").respond(400, false, "").end(observe.Complete)
			tl.v.ClientExited(report.Command{Args: []string{"client"}, ExitCode: 1})
			r := tl.final()
			c := expect(t, r, checks.ClientLastEventID, report.StatusWarn, 1)
			checkEvidence(t, c, func(e report.Evidence) bool { return e.Exchange != g.num || e.Message != tt.want })
			expectNone(t, r, checks.ClientReconnects, checks.ClientNewSessionAfter404)
			e := expect(t, r, checks.E2EEveryRequestAnswered, report.StatusFail, 1)
			checkEvidence(t, e, says("(client.last-event-id)"))
		})
	}
	t.Run("a reconnection that failed is said to have come", func(t *testing.T) {
		tl := initialized(t)
		tl.call("s1", 1, "tools/call").stream200().send(primeRetry("a1", 100)).send(note("a2")).end(observe.FaultClosed)
		tl.wait(time.Second)
		g := tl.get("s1", "a2").respond(409, false, "").end(observe.Complete)
		tl.v.ClientExited(report.Command{Args: []string{"client"}, ExitCode: 1})
		want := fmt.Sprintf(`the client's reconnection failed (409 on exchange %d), and it did not come back again before it exited, holding id "a2"`, g.num)
		c := expect(t, tl.final(), checks.ClientReconnects, report.StatusWarn, 1)
		checkEvidence(t, c, func(e report.Evidence) bool { return e.Message != want })
	})
}

// TestResumeOfAFinishedStream: a GET that names an id of a POST answer
// stream whose response was delivered and which ended resumes nothing
// (client.last-event-id); the same id while the call still waits for its
// response is a resumption like any other.
func TestResumeOfAFinishedStream(t *testing.T) {
	tl := initialized(t)
	tl.get("s1").stream200().send(prime("g1"))
	tl.toolCall("s1", 1, "a1", "a2", "a3")
	tl.wait(200 * ms)
	tl.get("s1", "a3").stream200().end(observe.Complete)
	c := check(t, tl.report(), checks.ClientLastEventID)
	if c.Count != 1 || !strings.Contains(c.Evidence[0].Message, "already delivered its response") {
		t.Fatalf("finding %d: %+v", c.Count, c.Evidence)
	}

	tl = initialized(t)
	tl.call("s1", 1, "tools/call").stream200().send(prime("a1")).send(note("a2")).end(observe.Complete)
	tl.wait(time.Second)
	tl.get("s1", "a2").stream200().send(resp("a3", 1)).end(observe.Complete)
	if c := check(t, tl.report(), checks.ClientLastEventID); c.Count != 0 || c.Applied == 0 {
		t.Errorf("a resumption of a pending call: applied %d, found %d: %+v", c.Applied, c.Count, c.Evidence)
	}
}
