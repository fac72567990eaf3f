package verify

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
)

// TestEveryFindingCarriesEvidence: for each check, a timeline that makes
// it find something, and the evidence of that finding: a message, the
// session's number, the exchange, a time, and the fault that set the
// situation up when one did.
func TestEveryFindingCarriesEvidence(t *testing.T) {
	tests := []struct {
		check string
		fault string // the fault kind the evidence names, "" for none
		ids   bool   // the evidence names event ids
		run   func(tl *timeline)
	}{
		{checks.ServerPrimingEvent, "", false, func(tl *timeline) {
			tl.call("s1", 1, "tools/call").stream200().send(resp("a1", 1)).end(observe.Complete)
		}},
		{checks.ServerPrimingEventGet, "", false, func(tl *timeline) {
			tl.get("s1").stream200().send(noID(note(""))).end(observe.Complete)
		}},
		{checks.ServerRetryBeforeClose, "", false, func(tl *timeline) {
			tl.call("s1", 1, "tools/call").stream200().send(prime("a1")).end(observe.Complete)
			tl.wait(time.Second)
			tl.get("s1", "a1").stream200().send(resp("a2", 1)).end(observe.Complete)
		}},
		{checks.ServerEventIDsUnique, "", true, func(tl *timeline) {
			tl.toolCall("s1", 1, "a1", "a2", "a3")
			tl.toolCall("s1", 2, "a1", "b2", "b3")
		}},
		{checks.ServerReplayComplete, "lose", true, func(tl *timeline) {
			lose(tl)
			tl.get("s1", "a2").stream200().send(resp("a4", 1)).send(note("a5")).end(observe.Complete)
		}},
		{checks.ServerReplayNoDuplicates, "lose", true, func(tl *timeline) {
			lose(tl)
			tl.get("s1", "a2").stream200().send(prime("a1")).send(note("a3")).send(resp("a4", 1)).end(observe.Complete)
		}},
		{checks.ServerReplayIsolated, "lose", true, func(tl *timeline) {
			lose(tl)
			tl.toolCall("s1", 2, "b1", "b2", "b3")
			tl.get("s1", "a2").stream200().send(note("b2")).send(note("a3")).send(resp("a4", 1)).end(observe.Complete)
		}},
		{checks.ServerResumeContinues, "lose", true, func(tl *timeline) {
			lose(tl)
			g := tl.get("s1", "a2").stream200().send(ev{noID: true})
			tl.wait(5 * time.Second)
			g.send(ev{noID: true}).end(observe.ClientGone)
		}},
		{checks.ServerDisconnectNotCancel, "lose", false, func(tl *timeline) {
			lose(tl)
			tl.get("s1", "a2").stream200().send(note("a3")).send(failed("a4", 1, -32603, "step 3: context canceled")).end(observe.Complete)
		}},
		{checks.ServerMessagesOnOwnStream, "", false, func(tl *timeline) {
			g := tl.get("s1").stream200()
			tl.callProgress("s1", 1, "tools/call", "t1").stream200().send(prime("a1"))
			g.send(progress("g1", "t1"))
		}},
		{checks.ServerUnknownSession404, "", false, func(tl *timeline) {
			tl.call("made-up", 1, "tools/list").jsonAnswer("1")
		}},
		{checks.ClientReconnects, "lose", true, func(tl *timeline) {
			lose(tl)
			tl.wait(time.Minute)
		}},
		{checks.ClientLastEventID, "lose", true, func(tl *timeline) {
			lose(tl)
			tl.get("s1", "a1").stream200().send(note("a2")).send(note("a3")).send(resp("a4", 1)).end(observe.Complete)
		}},
		{checks.ClientRetryHonoured, "set-retry", true, func(tl *timeline) {
			e := prime("a1")
			e.deliveredRetry = i64p(800)
			e.fired = append(e.fired, fault(2, "set-retry"))
			tl.call("s1", 1, "tools/call").stream200().send(e).end(observe.Complete)
			tl.wait(10 * ms)
			tl.get("s1", "a1").stream200().send(resp("a2", 1)).end(observe.Complete)
		}},
		{checks.ClientBackoff, "status", false, func(tl *timeline) {
			tl.call("s1", 1, "tools/call").stream200().send(prime("a1").as(observe.Delivered, fault(1, "close"))).end(observe.FaultClosed)
			for range 3 {
				tl.wait(ms)
				tl.status503("s1", "a1")
			}
		}},
		{checks.ClientRetriesTransient, "status", true, func(tl *timeline) {
			lose(tl)
			tl.wait(time.Second)
			tl.status503("s1", "a2")
			tl.wait(time.Minute)
		}},
		{checks.ClientNewSessionAfter404, "status", false, func(tl *timeline) {
			gone404(tl)
			tl.wait(time.Minute)
		}},
		{checks.E2EEveryRequestAnswered, "", false, func(tl *timeline) {
			tl.call("s1", 1, "tools/call").respond(202, false, "").end(observe.Complete)
			tl.wait(time.Minute)
		}},
		{checks.E2ENoMessageLost, "lose", true, func(tl *timeline) {
			lose(tl)
			tl.get("s1", "a2").stream200().send(resp("a4", 1)).end(observe.UpstreamFailed)
			tl.wait(time.Minute)
		}},
		{checks.E2ENoMessageDuplicated, "", false, func(tl *timeline) {
			tl.call("s1", 1, "tools/call").stream200().send(prime("a1")).send(resp("a2", 1)).send(resp("a3", 1)).end(observe.Complete)
		}},
		{checks.ClientReissuesCutRequest, "close", false, func(tl *timeline) {
			tl.speakStateless().cutCall(1)
			tl.wait(time.Minute)
		}},
		{checks.ClientListensAgain, "reset", false, func(tl *timeline) {
			tl.speakStateless().scall(1, mcp.MethodListen, "").stream200().send(acked().as(observe.Delivered, fault(0, "reset"))).end(observe.FaultReset)
			tl.wait(time.Minute)
		}},
		{checks.ClientRoutingHeaders, "", false, func(tl *timeline) {
			tl.speakStateless().scall(1, "tools/call", "add", header(mcp.HeaderName, "sub")).jsonAnswer("1")
		}},
		{checks.ServerSilentAfterCancel, "close", false, func(tl *timeline) {
			l := tl.speakStateless().listen(1)
			tl.cutCall(2)
			l.send(sresp(2))
		}},
		{checks.ServerListenAcknowledged, "", false, func(tl *timeline) {
			tl.speakStateless().scall(1, mcp.MethodListen, "").stream200().send(sresp(1))
		}},
		{checks.ClientTaskPollInterval, "", false, func(tl *timeline) {
			tl.speakStateless().taskCreated(1, "t-1", 500)
			tl.wait(10 * ms)
			tl.poll(2, "t-1", 500)
		}},
		{checks.ServerAccelBuffering, "", false, func(tl *timeline) {
			tl.speakStateless().scall(1, "tools/call", "add").stream200(accel("")).send(sresp(1)).end(observe.Complete)
		}},
		{checks.ServerUnsupportedVersion, "", false, func(tl *timeline) {
			tl.speakStateless().scall(1, "tools/list", "").respond(http.StatusOK, false, "").
				end(observe.Complete, observe.Message{Kind: mcp.RPCError, ID: "1", ErrorCode: mcp.ErrUnsupportedVersion})
		}},
		{checks.ServerGetStreamOr405, "", false, func(tl *timeline) {
			tl.getWith("s1", nil, header("Accept", "text/event-stream")).respond(http.StatusBadRequest, false, "")
		}},
		{checks.ServerSessionSurvivesRefusal, "", false, func(tl *timeline) {
			tl.call("s1", 1, "tools/call").respond(http.StatusBadRequest, false, "").end(observe.Complete)
			tl.call("s1", 2, "tools/call").respond(http.StatusServiceUnavailable, false, "").end(observe.Complete)
		}},
		{checks.ClientResumeLoop, "close", true, func(tl *timeline) {
			emptyResumes(tl, false, 100*ms, 100*ms, 100*ms, 100*ms, 100*ms)
		}},
		{checks.ClientSurvivesGetFailure, "status", false, func(tl *timeline) {
			c := refusedGet(tl, http.StatusMethodNotAllowed, true)
			tl.wait(ms)
			c.end(observe.ClientGone)
		}},
		{checks.ServerHeaderMismatchRejected, "rewrite-header", false, func(tl *timeline) {
			tl.speakStateless().scall(1, "tools/call", "add", fired(fault(0, "rewrite-header")),
				action(observe.RequestAction{SetHeaders: []faults.HeaderSet{{Name: mcp.HeaderName, Value: "x"}}})).jsonAnswer("1")
		}},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		seen[tt.check] = true
		t.Run(tt.check, func(t *testing.T) {
			tl := initialized(t)
			tl.wait(100 * ms)
			tt.run(tl)
			c := check(t, tl.report(), tt.check)
			if c.Count == 0 || len(c.Evidence) == 0 {
				t.Fatalf("no finding: %+v", c)
			}
			e := c.Evidence[0]
			sessionless := slices.Contains(statelessChecks, tt.check)
			if e.Message == "" || e.Session == 0 && !sessionless || e.Exchange == 0 || e.AtMS <= 0 {
				t.Errorf("evidence lacks a field: %+v", e)
			}
			if tt.ids && len(e.EventIDs) == 0 {
				t.Errorf("evidence names no event id: %+v", e)
			}
			switch {
			case tt.fault == "" && e.Fault != nil:
				t.Errorf("evidence names fault %+v, want none", e.Fault)
			case tt.fault != "" && (e.Fault == nil || e.Fault.Kind != tt.fault):
				t.Errorf("evidence names fault %+v, want kind %s", e.Fault, tt.fault)
			}
		})
	}
	for _, c := range checks.Catalog() {
		if !seen[c.ID] {
			t.Errorf("no evidence case for %s", c.ID)
		}
	}
}

// lose cuts a tools/call stream with a lose fault after two events, so
// that a notification and the response never reach the client.
func lose(tl *timeline) {
	tl.call("s1", 1, "tools/call").stream200().
		send(prime("a1")).send(note("a2")).
		send(note("a3").as(observe.Lost, fault(0, "lose"))).
		send(resp("a4", 1).as(observe.Lost)).
		end(observe.FaultClosed)
	tl.wait(time.Second)
}

// TestReportShape: statuses follow findings and severities; the verdict
// fails only on an error-level finding of an error-severity check; faults
// are counted once per firing, in registry order.
func TestReportShape(t *testing.T) {
	tl := initialized(t)
	tl.wait(ms)
	tl.status503("s1", "x")
	e := resp("a2", 1)
	e.copies, e.fired = 2, append(e.fired, fault(0, "duplicate"))
	tl.call("s1", 1, "tools/call").stream200().send(prime("a1").as(observe.Delivered, fault(1, "drop-priming"), fault(2, "corrupt"))).send(e).end(observe.Complete)
	r := tl.final()
	// Registry order: drop, delay, duplicate, strip-retry, set-retry,
	// strip-id, rewrite-id, drop-priming, corrupt, ... status.
	want := []report.FaultCount{{Kind: "duplicate", Count: 1}, {Kind: "drop-priming", Count: 1}, {Kind: "corrupt", Count: 1}, {Kind: "status", Count: 1}}
	if !slices.Equal(r.Faults, want) {
		t.Errorf("faults %+v, want %+v", r.Faults, want)
	}
	if r.Totals.Faults != 4 || tl.v.Progress().Faults != 4 {
		t.Errorf("totals.faults %d, progress %d, want 4", r.Totals.Faults, tl.v.Progress().Faults)
	}
	if r.Totals.Findings != tl.v.Progress().Findings {
		t.Errorf("findings %d in the totals, %d in progress", r.Totals.Findings, tl.v.Progress().Findings)
	}
	for _, c := range r.Checks {
		if c.Evidence == nil {
			t.Errorf("%s: nil evidence (JSON would write null)", c.ID)
		}
	}
}
