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

// refusedGet has a tools/call in flight while the session's standalone
// stream, opened and left by the client, is opened again and answered
// status by a status fault (resumed from "g1" when resume is set); with
// status 0 fray cuts the first stream instead, and nothing follows.
func refusedGet(tl *timeline, status int, resume bool) *xch {
	c := tl.call("s1", 1, "tools/call").stream200().send(prime("a1"))
	g := tl.get("s1").stream200().send(prime("g1"))
	tl.wait(50 * time.Millisecond)
	if status == 0 {
		g.end(observe.FaultClosed)
		return c
	}
	g.end(observe.ClientGone)
	a := observe.RequestAction{Answered: true}
	f := fault(3, "status")
	var leid *string
	if resume {
		leid = strp("g1")
	}
	tl.getWith("s1", leid, action(a), fired(f)).
		respond(status, false, "", origin(observe.FromFault), respFired(f)).end(observe.FaultAnswered)
	return c
}

// TestSurvivesGetFailure: a call left, or its session deleted, within two
// seconds of a failure of the standalone stream (a refusal, a cut) is a
// finding; a call answered, a call left later, a call cancelled first, a
// session deleted after another of its exchanges failed too (a reason of
// its own), a 404 (the session gone) and a standalone stream the client
// left itself are not.
func TestSurvivesGetFailure(t *testing.T) {
	// leftAfter has the client leave the call d after the failure.
	leftAfter := func(d time.Duration) func(tl *timeline, c *xch) {
		return func(tl *timeline, c *xch) {
			tl.wait(d)
			c.end(observe.ClientGone)
		}
	}
	for _, tc := range []struct {
		name    string
		status  int
		resume  bool
		then    func(tl *timeline, c *xch)
		applied int
		found   int
	}{
		{"left at once after a 405 to the resumption", http.StatusMethodNotAllowed, true, leftAfter(ms), 1, 1},
		{"left at once after a 405 to a plain GET", http.StatusMethodNotAllowed, false, leftAfter(ms), 1, 1},
		{"left at once after a 503", http.StatusServiceUnavailable, true, leftAfter(ms), 1, 1},
		{"answered", http.StatusMethodNotAllowed, true, func(tl *timeline, c *xch) {
			tl.wait(100 * ms)
			c.send(resp("a2", 1)).end(observe.Complete)
		}, 1, 0},
		{"left three seconds later", http.StatusMethodNotAllowed, true, leftAfter(3 * time.Second), 1, 0},
		{"cancelled, then left", http.StatusMethodNotAllowed, true, func(tl *timeline, c *xch) {
			tl.notify("s1", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`).respond(http.StatusAccepted, false, "").end(observe.Complete)
			c.end(observe.ClientGone)
		}, 1, 0},
		{"deleted the session at once after a 405", http.StatusMethodNotAllowed, true, func(tl *timeline, c *xch) {
			tl.wait(ms)
			tl.request(http.MethodDelete, "/mcp", mcp.StreamOther, "s1", "")
		}, 1, 1},
		{"deleted the session three seconds later", http.StatusMethodNotAllowed, true, func(tl *timeline, c *xch) {
			tl.wait(3 * time.Second)
			tl.request(http.MethodDelete, "/mcp", mcp.StreamOther, "s1", "")
		}, 1, 0},
		{"left at once after the stream ended", 0, false, leftAfter(ms), 1, 1},
		{"deleted the session after a call's own stream was cut", http.StatusBadGateway, false, func(tl *timeline, c *xch) {
			tl.call("s1", 2, "tools/call").stream200().send(prime("b1").as(observe.Delivered, fault(2, "reset"))).end(observe.FaultReset)
			tl.wait(ms)
			tl.request(http.MethodDelete, "/mcp", mcp.StreamOther, "s1", "")
		}, 1, 0},
		{"deleted the session after a call's resumption met a 503", http.StatusBadGateway, false, func(tl *timeline, c *xch) {
			tl.status503("s1", "a1")
			tl.wait(ms)
			tl.request(http.MethodDelete, "/mcp", mcp.StreamOther, "s1", "")
		}, 1, 0},
		{"the session gone", http.StatusNotFound, true, func(tl *timeline, c *xch) {
			c.end(observe.ClientGone)
		}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := initialized(t)
			tl.wait(100 * ms)
			c := refusedGet(tl, tc.status, tc.resume)
			tc.then(tl, c)
			got := check(t, tl.report(), checks.ClientSurvivesGetFailure)
			if got.Applied != tc.applied || got.Count != tc.found {
				t.Errorf("applied %d, found %d; want %d, %d: %+v", got.Applied, got.Count, tc.applied, tc.found, got.Evidence)
			}
		})
	}
}

// TestGetRefusalOfAPostResume: a refused resumption of a POST stream is
// no refusal of the standalone stream.
func TestGetRefusalOfAPostResume(t *testing.T) {
	tl := initialized(t)
	tl.wait(100 * time.Millisecond)
	tl.call("s1", 1, "tools/call").stream200().send(prime("a1").as(observe.Delivered, fault(1, "close"))).end(observe.FaultClosed)
	c := tl.call("s1", 2, "tools/call").stream200().send(prime("b1"))
	tl.wait(50 * time.Millisecond)
	tl.status503("s1", "a1")
	c.end(observe.ClientGone)
	expect(t, tl.report(), checks.ClientSurvivesGetFailure, report.StatusSkip, 0)
}
