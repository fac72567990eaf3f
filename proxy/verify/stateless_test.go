package verify

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
)

// statelessChecks are the checks of 2026-07-28: their traffic has no
// session, so their evidence names none.
var statelessChecks = []string{
	checks.ClientReissuesCutRequest, checks.ClientListensAgain, checks.ClientRoutingHeaders,
	checks.ServerSilentAfterCancel, checks.ServerListenAcknowledged, checks.ServerHeaderMismatchRejected,
	checks.ClientTaskPollInterval, checks.ServerAccelBuffering, checks.ServerUnsupportedVersion,
}

// speakStateless makes the timeline's requests without a session speak
// 2026-07-28.
func (tl *timeline) speakStateless() *timeline {
	tl.protocol[""] = mcp.RevStateless
	return tl
}

// scall POSTs a 2026-07-28 request: its revision in _meta and in
// Mcp-Protocol-Version, Mcp-Method and (for a name) Mcp-Name equal to the
// body, and progress asked for under "tok-<id>".
func (tl *timeline) scall(id int, method, name string, opts ...reqOpt) *xch {
	params := fmt.Sprintf(`"_meta":{%q:%q,"progressToken":"tok-%d"}`, mcp.MetaProtocolVersion, mcp.RevStateless, id)
	if name != "" {
		params = fmt.Sprintf(`"name":%q,`, name) + params
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s}}`, id, method, params)
	routed := []reqOpt{header(mcp.HeaderProtocol, mcp.RevStateless), header(mcp.HeaderMethod, method)}
	if name != "" {
		routed = append(routed, header(mcp.HeaderName, name))
	}
	return tl.request("POST", "/mcp", mcp.StreamPost, "", body, append(routed, opts...)...)
}

// listen opens a subscriptions/listen stream and delivers its
// acknowledgement.
func (tl *timeline) listen(id int) *xch {
	return tl.scall(id, mcp.MethodListen, "").stream200().send(acked())
}

func acked() ev {
	return noID(ev{data: `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{}}`})
}
func sresp(rpcID int) ev { return noID(resp("", rpcID)) }
func sprogress(id int) ev {
	return noID(progress("", fmt.Sprintf("tok-%d", id)))
}

// cutCall runs a tools/call whose stream fray closes after its progress.
func (tl *timeline) cutCall(id int) *xch {
	return tl.scall(id, "tools/call", "add").stream200().
		send(sprogress(id).as(observe.Delivered, fault(0, "close"))).end(observe.FaultClosed)
}

func TestStatelessReissue(t *testing.T) {
	t.Run("a new id, after a backoff: pass", func(t *testing.T) {
		tl := newTimeline(t, Options{}).speakStateless()
		tl.cutCall(1)
		tl.wait(30 * ms)
		tl.scall(2, "tools/call", "add").stream200().send(sresp(2)).end(observe.Complete)
		r := tl.final()
		expect(t, r, checks.ClientReissuesCutRequest, report.StatusPass, 0)
		expect(t, r, checks.E2EEveryRequestAnswered, report.StatusPass, 0)
		expect(t, r, checks.ClientBackoff, report.StatusPass, 0)
		expectVerdict(t, r, report.VerdictPass, "")
	})
	t.Run("the same id: fail", func(t *testing.T) {
		tl := newTimeline(t, Options{}).speakStateless()
		tl.cutCall(1)
		tl.wait(30 * ms)
		tl.scall(1, "tools/call", "add").stream200().send(sresp(1)).end(observe.Complete)
		r := tl.final()
		c := expect(t, r, checks.ClientReissuesCutRequest, report.StatusFail, 1)
		if len(c.Evidence) == 1 && c.Evidence[0].Fault == nil {
			t.Errorf("the evidence names no fault: %+v", c.Evidence[0])
		}
		// The server answered the re-issue: nothing else is found.
		expect(t, r, checks.E2EEveryRequestAnswered, report.StatusPass, 0)
		expect(t, r, checks.ServerSilentAfterCancel, report.StatusPass, 0)
	})
	t.Run("another call is no re-issue", func(t *testing.T) {
		tl := newTimeline(t, Options{}).speakStateless()
		tl.cutCall(1)
		tl.wait(30 * ms)
		tl.scall(2, "tools/call", "sub").stream200().send(sresp(2)).end(observe.Complete)
		tl.wait(time.Minute)
		expect(t, tl.report(), checks.ClientReissuesCutRequest, report.StatusFail, 1)
	})
	t.Run("none within the deadline: fail", func(t *testing.T) {
		tl := newTimeline(t, Options{}).speakStateless()
		tl.cutCall(1)
		tl.wait(29 * time.Second)
		expect(t, tl.report(), checks.ClientReissuesCutRequest, report.StatusSkip, 0)
		tl.wait(2 * time.Second)
		expect(t, tl.report(), checks.ClientReissuesCutRequest, report.StatusFail, 1)
	})
	t.Run("the run ends soon after the cut: excused", func(t *testing.T) {
		tl := newTimeline(t, Options{}).speakStateless()
		tl.cutCall(1)
		tl.wait(100 * ms)
		expectExcused(t, tl.final(), checks.ClientReissuesCutRequest, "the run ended soon after the stream broke")
	})
	t.Run("a client that exited owed it at once", func(t *testing.T) {
		tl := newTimeline(t, Options{}).speakStateless()
		tl.cutCall(1)
		tl.wait(100 * ms)
		tl.v.ClientExited(report.Command{Args: []string{"client"}})
		expect(t, tl.final(), checks.ClientReissuesCutRequest, report.StatusFail, 1)
	})
	t.Run("a re-issue with Last-Event-ID warns", func(t *testing.T) {
		tl := newTimeline(t, Options{}).speakStateless()
		tl.cutCall(1)
		tl.wait(30 * ms)
		tl.scall(2, "tools/call", "add", header("Last-Event-ID", "x")).stream200().send(sresp(2)).end(observe.Complete)
		expect(t, tl.final(), checks.ClientReissuesCutRequest, report.StatusWarn, 1)
	})
	t.Run("immediate re-issues that do not back off are a storm", func(t *testing.T) {
		tl := newTimeline(t, Options{}).speakStateless()
		for id := 1; id <= 3; id++ {
			tl.cutCall(id)
			tl.wait(2 * ms)
		}
		tl.scall(4, "tools/call", "add").stream200().send(sresp(4)).end(observe.Complete)
		r := tl.final()
		expect(t, r, checks.ClientBackoff, report.StatusWarn, 1)
		expect(t, r, checks.ClientReissuesCutRequest, report.StatusPass, 0)
	})
	t.Run("a growing backoff is no storm", func(t *testing.T) {
		tl := newTimeline(t, Options{}).speakStateless()
		for id, wait := range []time.Duration{20 * ms, 40 * ms, 80 * ms} {
			tl.cutCall(id + 1)
			tl.wait(wait)
		}
		tl.scall(4, "tools/call", "add").stream200().send(sresp(4)).end(observe.Complete)
		expect(t, tl.final(), checks.ClientBackoff, report.StatusPass, 0)
	})
	t.Run("a server that ends the stream itself owed the response", func(t *testing.T) {
		tl := newTimeline(t, Options{}).speakStateless()
		tl.scall(1, "tools/call", "add").stream200().send(sprogress(1)).end(observe.Complete)
		tl.wait(30 * ms)
		tl.scall(2, "tools/call", "add").stream200().send(sresp(2)).end(observe.Complete)
		tl.wait(time.Minute)
		r := tl.final()
		expect(t, r, checks.ClientReissuesCutRequest, report.StatusPass, 0)
		expect(t, r, checks.E2EEveryRequestAnswered, report.StatusFail, 1)
	})
}

func TestStatelessSilentAfterCancel(t *testing.T) {
	t.Run("a response on the listen stream after the cut: fail", func(t *testing.T) {
		tl := newTimeline(t, Options{}).speakStateless()
		l := tl.listen(1)
		tl.wait(10 * ms)
		tl.cutCall(2)
		tl.wait(10 * ms)
		l.send(sprogress(2)).send(sresp(2))
		r := tl.report()
		c := expect(t, r, checks.ServerSilentAfterCancel, report.StatusFail, 1)
		if len(c.Evidence) == 1 && (c.Evidence[0].Fault == nil || c.Evidence[0].Fault.Kind != "close") {
			t.Errorf("evidence %+v, want the close that cut it", c.Evidence[0])
		}
		expect(t, r, checks.ServerMessagesOnOwnStream, report.StatusSkip, 0)
	})
	t.Run("a client that closed its stream cancelled it too", func(t *testing.T) {
		tl := newTimeline(t, Options{}).speakStateless()
		l := tl.listen(1)
		tl.scall(2, "tools/call", "add").stream200().send(sprogress(2)).end(observe.ClientGone)
		tl.wait(10 * ms)
		l.send(sresp(2))
		r := tl.final()
		expect(t, r, checks.ServerSilentAfterCancel, report.StatusFail, 1)
		expect(t, r, checks.ClientReissuesCutRequest, report.StatusSkip, 0)
	})
	t.Run("a call the client cancelled owes no answer", func(t *testing.T) {
		tl := newTimeline(t, Options{}).speakStateless()
		tl.scall(1, "tools/call", "add").stream200().send(sprogress(1)).end(observe.ClientGone)
		tl.wait(time.Minute)
		r := tl.final()
		expectExcused(t, r, checks.E2EEveryRequestAnswered, "the client cancelled it by closing its stream (2026-07-28)")
		expect(t, r, checks.ClientReissuesCutRequest, report.StatusSkip, 0)
	})
	t.Run("quiet after the cut, the re-issue answered: pass", func(t *testing.T) {
		tl := newTimeline(t, Options{}).speakStateless()
		l := tl.listen(1)
		tl.cutCall(2)
		tl.wait(30 * ms)
		tl.scall(3, "tools/call", "add").stream200().send(sprogress(3)).send(sresp(3)).end(observe.Complete)
		l.end(observe.ClientGone)
		r := tl.final()
		expect(t, r, checks.ServerSilentAfterCancel, report.StatusPass, 0)
		expect(t, r, checks.ServerListenAcknowledged, report.StatusPass, 0)
		expectVerdict(t, r, report.VerdictPass, "")
	})
	t.Run("an id the client used again is not watched", func(t *testing.T) {
		tl := newTimeline(t, Options{}).speakStateless()
		l := tl.listen(1)
		tl.cutCall(2)
		tl.wait(30 * ms)
		tl.scall(2, "tools/call", "add").stream200().send(sprogress(2))
		l.send(sresp(2))
		expect(t, tl.report(), checks.ServerSilentAfterCancel, report.StatusPass, 0)
	})
	t.Run("a progress token the client used again is not watched", func(t *testing.T) {
		tl := newTimeline(t, Options{}).speakStateless()
		l := tl.listen(1)
		tl.cutCall(2)
		tl.wait(30 * ms)
		// The re-issue (id 3) asks for progress under the cut call's token.
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","_meta":{%q:%q,"progressToken":"tok-2"}}}`, mcp.MetaProtocolVersion, mcp.RevStateless)
		tl.request("POST", "/mcp", mcp.StreamPost, "", body, header(mcp.HeaderProtocol, mcp.RevStateless), header(mcp.HeaderMethod, "tools/call"), header(mcp.HeaderName, "add")).stream200()
		l.send(sprogress(2))
		r := tl.report()
		expect(t, r, checks.ServerSilentAfterCancel, report.StatusPass, 0)
		expect(t, r, checks.ClientReissuesCutRequest, report.StatusPass, 0)
	})
	t.Run("a response sent before the cut is not held against the server", func(t *testing.T) {
		tl := newTimeline(t, Options{}).speakStateless()
		tl.listen(1)
		tl.scall(2, "tools/call", "add").stream200().send(sresp(2).as(observe.Cut, fault(0, "close"))).end(observe.FaultClosed)
		expectExcused(t, tl.report(), checks.ServerSilentAfterCancel, "the server had sent its response before the stream closed")
	})
}

func TestStatelessListen(t *testing.T) {
	t.Run("a notification before the acknowledgement: fail", func(t *testing.T) {
		tl := newTimeline(t, Options{}).speakStateless()
		tl.scall(1, mcp.MethodListen, "").stream200().send(noID(ev{data: `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`})).send(acked())
		expect(t, tl.report(), checks.ServerListenAcknowledged, report.StatusFail, 1)
	})
	t.Run("a stream ended by the server with no message: fail", func(t *testing.T) {
		tl := newTimeline(t, Options{}).speakStateless()
		tl.scall(1, mcp.MethodListen, "").stream200().end(observe.Complete)
		expect(t, tl.report(), checks.ServerListenAcknowledged, report.StatusFail, 1)
	})
	t.Run("cut before its first message: excused", func(t *testing.T) {
		tl := newTimeline(t, Options{}).speakStateless()
		tl.scall(1, mcp.MethodListen, "").stream200().end(observe.ClientGone)
		expectExcused(t, tl.report(), checks.ServerListenAcknowledged, "the stream was cut before its first message")
	})
	t.Run("lost, then listened again: pass", func(t *testing.T) {
		tl := newTimeline(t, Options{}).speakStateless()
		tl.listen(1).end(observe.FaultReset)
		tl.wait(50 * ms)
		tl.listen(2).end(observe.ClientGone)
		r := tl.final()
		expect(t, r, checks.ClientListensAgain, report.StatusPass, 0)
		expect(t, r, checks.E2EEveryRequestAnswered, report.StatusSkip, 0)
		expect(t, r, checks.ClientReissuesCutRequest, report.StatusSkip, 0)
	})
	t.Run("lost, never listened again: a warning", func(t *testing.T) {
		tl := newTimeline(t, Options{}).speakStateless()
		tl.listen(1).end(observe.UpstreamFailed)
		tl.wait(time.Minute)
		r := tl.final()
		expect(t, r, checks.ClientListensAgain, report.StatusWarn, 1)
		expectVerdict(t, r, report.VerdictPass, "")
	})
	t.Run("closed gracefully with its response: nothing owed", func(t *testing.T) {
		tl := newTimeline(t, Options{}).speakStateless()
		tl.listen(1).send(sresp(1)).end(observe.Complete)
		tl.wait(time.Minute)
		expect(t, tl.final(), checks.ClientListensAgain, report.StatusSkip, 0)
	})
}

func TestStatelessRoutingHeaders(t *testing.T) {
	mismatch := action(observe.RequestAction{SetHeaders: []faults.HeaderSet{{Name: mcp.HeaderName, Value: "fray-mismatch"}}})
	rewrite := fired(fault(0, "rewrite-header"))
	rejected := func(x *xch) {
		x.respond(http.StatusBadRequest, false, "")
		x.end(observe.Complete, observe.Message{Kind: mcp.RPCError, ID: "1", ErrorCode: mcp.ErrHeaderMismatch})
	}
	t.Run("matching headers: pass", func(t *testing.T) {
		tl := newTimeline(t, Options{}).speakStateless()
		tl.scall(1, "tools/call", "add").jsonAnswer("1")
		r := tl.final()
		expect(t, r, checks.ClientRoutingHeaders, report.StatusPass, 0)
		expect(t, r, checks.ServerHeaderMismatchRejected, report.StatusSkip, 0)
	})
	t.Run("the client's Mcp-Name differs: fail, and the server rejects it", func(t *testing.T) {
		tl := newTimeline(t, Options{}).speakStateless()
		rejected(tl.scall(1, "tools/call", "add", header(mcp.HeaderName, "sub")))
		r := tl.final()
		expect(t, r, checks.ClientRoutingHeaders, report.StatusFail, 1)
		expect(t, r, checks.ServerHeaderMismatchRejected, report.StatusPass, 0)
	})
	t.Run("fray's rewrite is not the client's: the server rejects it", func(t *testing.T) {
		tl := newTimeline(t, Options{}).speakStateless()
		rejected(tl.scall(1, "tools/call", "add", mismatch, rewrite))
		r := tl.final()
		expect(t, r, checks.ClientRoutingHeaders, report.StatusPass, 0)
		expect(t, r, checks.ServerHeaderMismatchRejected, report.StatusPass, 0)
		expect(t, r, checks.ClientReissuesCutRequest, report.StatusSkip, 0)
	})
	t.Run("a server that serves the mismatch: fail", func(t *testing.T) {
		tl := newTimeline(t, Options{}).speakStateless()
		tl.scall(1, "tools/call", "add", mismatch, rewrite).jsonAnswer("1")
		c := expect(t, tl.final(), checks.ServerHeaderMismatchRejected, report.StatusFail, 1)
		if len(c.Evidence) == 1 && (c.Evidence[0].Fault == nil || c.Evidence[0].Fault.Kind != "rewrite-header") {
			t.Errorf("evidence %+v, want the rewrite-header fault", c.Evidence[0])
		}
	})
	// A format 1 trace did not record the body's name: the request is
	// read back with its name unknown.
	unrecorded := func(o *observe.Observation) {
		for i := range o.Request.Messages {
			m := &o.Request.Messages[i]
			m.Name, m.HasName, m.NameUnknown = "", false, true
		}
	}
	t.Run("a name never recorded is not judged", func(t *testing.T) {
		tl := newTimeline(t, Options{}).speakStateless()
		tl.scall(1, "tools/call", "add", unrecorded).jsonAnswer("1")
		tl.scall(2, "tools/call", "add", unrecorded, mismatch, rewrite).jsonAnswer("2")
		r := tl.final()
		expect(t, r, checks.ClientRoutingHeaders, report.StatusPass, 0)
		expect(t, r, checks.ServerHeaderMismatchRejected, report.StatusSkip, 0)
	})
	t.Run("a name never recorded: the method is still judged", func(t *testing.T) {
		tl := newTimeline(t, Options{}).speakStateless()
		tl.scall(1, "tools/call", "add", unrecorded, header(mcp.HeaderMethod, "tools/list")).jsonAnswer("1")
		expect(t, tl.final(), checks.ClientRoutingHeaders, report.StatusFail, 1)
	})
	t.Run("400 without -32020: fail", func(t *testing.T) {
		tl := newTimeline(t, Options{}).speakStateless()
		x := tl.scall(1, "tools/call", "add", mismatch, rewrite)
		x.respond(http.StatusBadRequest, false, "")
		x.end(observe.Complete, observe.Message{Kind: mcp.RPCError, ID: "1", ErrorCode: -32600})
		expect(t, tl.final(), checks.ServerHeaderMismatchRejected, report.StatusFail, 1)
	})
}

// TestErasDoNotJudgeEachOther: a 2025-11-25 session is not judged by the
// checks of 2026-07-28, and 2026-07-28 requests are not judged by the
// checks that rest on sessions, priming events and resumption.
func TestErasDoNotJudgeEachOther(t *testing.T) {
	tl := initialized(t)
	tl.toolCall("s1", 1, "a1", "a2", "a3")
	tl.call("s1", 2, "tools/call").stream200().send(prime("b1").as(observe.Delivered, fault(0, "close"))).end(observe.FaultClosed)
	tl.wait(10 * ms)
	tl.get("s1", "b1").stream200().send(resp("b2", 2)).end(observe.Complete)
	tl.speakStateless()
	tl.listen(10)
	tl.cutCall(11)
	tl.wait(30 * ms)
	tl.scall(12, "tools/call", "add").stream200().send(sresp(12)).end(observe.Complete)
	r := tl.final()
	for _, id := range statelessChecks {
		c := check(t, r, id)
		if c.Count != 0 {
			t.Errorf("%s found %+v", id, c.Evidence)
		}
	}
	expect(t, r, checks.ClientReissuesCutRequest, report.StatusPass, 0)
	expect(t, r, checks.ClientReconnects, report.StatusPass, 0)
	// The 2026-07-28 streams owe no priming event and no retry.
	if n := check(t, r, checks.ServerPrimingEvent).Applied; n != 2 {
		t.Errorf("server.priming-event judged %d streams, want the 2 of 2025-11-25", n)
	}
	expectVerdict(t, r, report.VerdictPass, "")
}
