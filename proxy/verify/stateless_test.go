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

// statelessChecks are the checks of 2026-07-28: their traffic has no
// session, so their evidence names none.
var statelessChecks = []string{
	checks.ClientReissuesCutRequest, checks.ClientListensAgain, checks.ClientRoutingHeaders,
	checks.ServerSilentAfterCancel, checks.ServerListenAcknowledged, checks.ServerHeaderMismatchRejected,
	checks.ClientTaskPollInterval, checks.ServerAccelBuffering, checks.ServerUnsupportedVersion,
}

// newStateless is a timeline whose requests without a session speak
// 2026-07-28.
func newStateless(t *testing.T) *timeline { return newTimeline(t, Options{}).speakStateless() }

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
	tell(t, newStateless, (*timeline).final, []story{
		{"a new id, after a backoff: pass", func(tl *timeline) {
			tl.cutCall(1)
			tl.wait(30 * ms)
			tl.scall(2, "tools/call", "add").stream200().send(sresp(2)).end(observe.Complete)
		}, all(is(checks.ClientReissuesCutRequest, report.StatusPass, 0), is(checks.E2EEveryRequestAnswered, report.StatusPass, 0),
			is(checks.ClientBackoff, report.StatusPass, 0), verdict(report.VerdictPass, ""))},
		{"the same id: fail", func(tl *timeline) {
			tl.cutCall(1)
			tl.wait(30 * ms)
			tl.scall(1, "tools/call", "add").stream200().send(sresp(1)).end(observe.Complete)
		}, all(isWith(checks.ClientReissuesCutRequest, report.StatusFail, 1, func(e report.Evidence) bool { return e.Fault == nil }),
			// The server answered the re-issue: nothing else is found.
			is(checks.E2EEveryRequestAnswered, report.StatusPass, 0), is(checks.ServerSilentAfterCancel, report.StatusPass, 0))},
		{"the run ends soon after the cut: excused", func(tl *timeline) {
			tl.cutCall(1)
			tl.wait(100 * ms)
		}, excuses(checks.ClientReissuesCutRequest, "the run ended soon after the stream broke")},
		{"a client that exited owed it at once", func(tl *timeline) {
			tl.cutCall(1)
			tl.wait(100 * ms)
			tl.v.ClientExited(report.Command{Args: []string{"client"}})
		}, is(checks.ClientReissuesCutRequest, report.StatusFail, 1)},
		{"a re-issue with Last-Event-ID warns", func(tl *timeline) {
			tl.cutCall(1)
			tl.wait(30 * ms)
			tl.scall(2, "tools/call", "add", header("Last-Event-ID", "x")).stream200().send(sresp(2)).end(observe.Complete)
		}, is(checks.ClientReissuesCutRequest, report.StatusWarn, 1)},
		{"immediate re-issues that do not back off are a storm", func(tl *timeline) {
			for id := 1; id <= 3; id++ {
				tl.cutCall(id)
				tl.wait(2 * ms)
			}
			tl.scall(4, "tools/call", "add").stream200().send(sresp(4)).end(observe.Complete)
		}, all(is(checks.ClientBackoff, report.StatusWarn, 1), is(checks.ClientReissuesCutRequest, report.StatusPass, 0))},
		{"a growing backoff is no storm", func(tl *timeline) {
			for id, wait := range []time.Duration{20 * ms, 40 * ms, 80 * ms} {
				tl.cutCall(id + 1)
				tl.wait(wait)
			}
			tl.scall(4, "tools/call", "add").stream200().send(sresp(4)).end(observe.Complete)
		}, is(checks.ClientBackoff, report.StatusPass, 0)},
		{"a server that ends the stream itself owed the response", func(tl *timeline) {
			tl.scall(1, "tools/call", "add").stream200().send(sprogress(1)).end(observe.Complete)
			tl.wait(30 * ms)
			tl.scall(2, "tools/call", "add").stream200().send(sresp(2)).end(observe.Complete)
			tl.wait(time.Minute)
		}, all(is(checks.ClientReissuesCutRequest, report.StatusPass, 0), is(checks.E2EEveryRequestAnswered, report.StatusFail, 1))},
	})
	tell(t, newStateless, (*timeline).report, []story{
		{"another call is no re-issue", func(tl *timeline) {
			tl.cutCall(1)
			tl.wait(30 * ms)
			tl.scall(2, "tools/call", "sub").stream200().send(sresp(2)).end(observe.Complete)
			tl.wait(time.Minute)
		}, is(checks.ClientReissuesCutRequest, report.StatusFail, 1)},
	})
	t.Run("none within the deadline: fail", func(t *testing.T) {
		tl := newStateless(t)
		tl.cutCall(1)
		tl.wait(29 * time.Second)
		expect(t, tl.report(), checks.ClientReissuesCutRequest, report.StatusSkip, 0)
		tl.wait(2 * time.Second)
		expect(t, tl.report(), checks.ClientReissuesCutRequest, report.StatusFail, 1)
	})
}

func TestStatelessSilentAfterCancel(t *testing.T) {
	tell(t, newStateless, (*timeline).report, []story{
		{"a response on the listen stream after the cut: fail", func(tl *timeline) {
			l := tl.listen(1)
			tl.wait(10 * ms)
			tl.cutCall(2)
			tl.wait(10 * ms)
			l.send(sprogress(2)).send(sresp(2))
		}, all(isWith(checks.ServerSilentAfterCancel, report.StatusFail, 1, func(e report.Evidence) bool {
			return e.Fault == nil || e.Fault.Kind != "close" // the close that cut it
		}), is(checks.ServerMessagesOnOwnStream, report.StatusSkip, 0))},
		{"an id the client used again is not watched", func(tl *timeline) {
			l := tl.listen(1)
			tl.cutCall(2)
			tl.wait(30 * ms)
			tl.scall(2, "tools/call", "add").stream200().send(sprogress(2))
			l.send(sresp(2))
		}, is(checks.ServerSilentAfterCancel, report.StatusPass, 0)},
		{"a progress token the client used again is not watched", func(tl *timeline) {
			l := tl.listen(1)
			tl.cutCall(2)
			tl.wait(30 * ms)
			// The re-issue (id 3) asks for progress under the cut call's token.
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","_meta":{%q:%q,"progressToken":"tok-2"}}}`, mcp.MetaProtocolVersion, mcp.RevStateless)
			tl.request("POST", "/mcp", mcp.StreamPost, "", body, header(mcp.HeaderProtocol, mcp.RevStateless), header(mcp.HeaderMethod, "tools/call"), header(mcp.HeaderName, "add")).stream200()
			l.send(sprogress(2))
		}, all(is(checks.ServerSilentAfterCancel, report.StatusPass, 0), is(checks.ClientReissuesCutRequest, report.StatusPass, 0))},
		{"a response sent before the cut is not held against the server", func(tl *timeline) {
			tl.listen(1)
			tl.scall(2, "tools/call", "add").stream200().send(sresp(2).as(observe.Cut, fault(0, "close"))).end(observe.FaultClosed)
		}, excuses(checks.ServerSilentAfterCancel, "the server had sent its response before the stream closed")},
	})
	tell(t, newStateless, (*timeline).final, []story{
		{"a client that closed its stream cancelled it too", func(tl *timeline) {
			l := tl.listen(1)
			tl.scall(2, "tools/call", "add").stream200().send(sprogress(2)).end(observe.ClientGone)
			tl.wait(10 * ms)
			l.send(sresp(2))
		}, all(is(checks.ServerSilentAfterCancel, report.StatusFail, 1), is(checks.ClientReissuesCutRequest, report.StatusSkip, 0))},
		{"a call the client cancelled owes no answer", func(tl *timeline) {
			tl.scall(1, "tools/call", "add").stream200().send(sprogress(1)).end(observe.ClientGone)
			tl.wait(time.Minute)
		}, all(excuses(checks.E2EEveryRequestAnswered, "the client cancelled it by closing its stream (2026-07-28)"),
			is(checks.ClientReissuesCutRequest, report.StatusSkip, 0))},
		{"quiet after the cut, the re-issue answered: pass", func(tl *timeline) {
			l := tl.listen(1)
			tl.cutCall(2)
			tl.wait(30 * ms)
			tl.scall(3, "tools/call", "add").stream200().send(sprogress(3)).send(sresp(3)).end(observe.Complete)
			l.end(observe.ClientGone)
		}, all(is(checks.ServerSilentAfterCancel, report.StatusPass, 0), is(checks.ServerListenAcknowledged, report.StatusPass, 0),
			verdict(report.VerdictPass, ""))},
	})
}

func TestStatelessListen(t *testing.T) {
	tell(t, newStateless, (*timeline).report, []story{
		{"a notification before the acknowledgement: fail", func(tl *timeline) {
			tl.scall(1, mcp.MethodListen, "").stream200().send(noID(ev{data: `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`})).send(acked())
		}, is(checks.ServerListenAcknowledged, report.StatusFail, 1)},
		{"a stream ended by the server with no message: fail", func(tl *timeline) {
			tl.scall(1, mcp.MethodListen, "").stream200().end(observe.Complete)
		}, is(checks.ServerListenAcknowledged, report.StatusFail, 1)},
		{"cut before its first message: excused", func(tl *timeline) {
			tl.scall(1, mcp.MethodListen, "").stream200().end(observe.ClientGone)
		}, excuses(checks.ServerListenAcknowledged, "the stream was cut before its first message")},
	})
	tell(t, newStateless, (*timeline).final, []story{
		{"lost, then listened again: pass", func(tl *timeline) {
			tl.listen(1).end(observe.FaultReset)
			tl.wait(50 * ms)
			tl.listen(2).end(observe.ClientGone)
		}, all(is(checks.ClientListensAgain, report.StatusPass, 0), is(checks.E2EEveryRequestAnswered, report.StatusSkip, 0),
			is(checks.ClientReissuesCutRequest, report.StatusSkip, 0))},
		{"lost, never listened again: a warning", func(tl *timeline) {
			tl.listen(1).end(observe.UpstreamFailed)
			tl.wait(time.Minute)
		}, all(is(checks.ClientListensAgain, report.StatusWarn, 1), verdict(report.VerdictPass, ""))},
		{"closed gracefully with its response: nothing owed", func(tl *timeline) {
			tl.listen(1).send(sresp(1)).end(observe.Complete)
			tl.wait(time.Minute)
		}, is(checks.ClientListensAgain, report.StatusSkip, 0)},
	})
}

func TestStatelessRoutingHeaders(t *testing.T) {
	mismatch := action(observe.RequestAction{SetHeaders: []faults.HeaderSet{{Name: mcp.HeaderName, Value: "fray-mismatch"}}})
	rewrite := fired(fault(0, "rewrite-header"))
	rejected := func(x *xch) {
		x.respond(http.StatusBadRequest, false, "")
		x.end(observe.Complete, observe.Message{Kind: mcp.RPCError, ID: "1", ErrorCode: mcp.ErrHeaderMismatch})
	}
	// A format 1 trace did not record the body's name: the request is
	// read back with its name unknown.
	unrecorded := func(o *observe.Observation) {
		for i := range o.Request.Messages {
			m := &o.Request.Messages[i]
			m.Name, m.HasName, m.NameUnknown = "", false, true
		}
	}
	tell(t, newStateless, (*timeline).final, []story{
		{"matching headers: pass", func(tl *timeline) { tl.scall(1, "tools/call", "add").jsonAnswer("1") },
			all(is(checks.ClientRoutingHeaders, report.StatusPass, 0), is(checks.ServerHeaderMismatchRejected, report.StatusSkip, 0))},
		{"the client's Mcp-Name differs: fail, and the server rejects it", func(tl *timeline) {
			rejected(tl.scall(1, "tools/call", "add", header(mcp.HeaderName, "sub")))
		}, all(is(checks.ClientRoutingHeaders, report.StatusFail, 1), is(checks.ServerHeaderMismatchRejected, report.StatusPass, 0))},
		{"fray's rewrite is not the client's: the server rejects it", func(tl *timeline) { rejected(tl.scall(1, "tools/call", "add", mismatch, rewrite)) },
			all(is(checks.ClientRoutingHeaders, report.StatusPass, 0), is(checks.ServerHeaderMismatchRejected, report.StatusPass, 0),
				is(checks.ClientReissuesCutRequest, report.StatusSkip, 0))},
		{"a server that serves the mismatch: fail", func(tl *timeline) { tl.scall(1, "tools/call", "add", mismatch, rewrite).jsonAnswer("1") },
			isWith(checks.ServerHeaderMismatchRejected, report.StatusFail, 1, func(e report.Evidence) bool {
				return e.Fault == nil || e.Fault.Kind != "rewrite-header"
			})},
		{"a name never recorded is not judged", func(tl *timeline) {
			tl.scall(1, "tools/call", "add", unrecorded).jsonAnswer("1")
			tl.scall(2, "tools/call", "add", unrecorded, mismatch, rewrite).jsonAnswer("2")
		}, all(is(checks.ClientRoutingHeaders, report.StatusPass, 0), is(checks.ServerHeaderMismatchRejected, report.StatusSkip, 0))},
		{"a name never recorded: the method is still judged", func(tl *timeline) {
			tl.scall(1, "tools/call", "add", unrecorded, header(mcp.HeaderMethod, "tools/list")).jsonAnswer("1")
		}, is(checks.ClientRoutingHeaders, report.StatusFail, 1)},
		{"400 without -32020: fail", func(tl *timeline) {
			x := tl.scall(1, "tools/call", "add", mismatch, rewrite)
			x.respond(http.StatusBadRequest, false, "")
			x.end(observe.Complete, observe.Message{Kind: mcp.RPCError, ID: "1", ErrorCode: -32600})
		}, is(checks.ServerHeaderMismatchRejected, report.StatusFail, 1)},
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
	expectNone(t, r, statelessChecks...)
	expect(t, r, checks.ClientReissuesCutRequest, report.StatusPass, 0)
	expect(t, r, checks.ClientReconnects, report.StatusPass, 0)
	// The 2026-07-28 streams owe no priming event and no retry.
	if n := check(t, r, checks.ServerPrimingEvent).Applied; n != 2 {
		t.Errorf("server.priming-event judged %d streams, want the 2 of 2025-11-25", n)
	}
	expectVerdict(t, r, report.VerdictPass, "")
}

// taskCreated runs a tools/call answered with a task to poll every
// pollMS, in a JSON body.
func (tl *timeline) taskCreated(id int, task string, pollMS int64) {
	x := tl.scall(id, "tools/call", "long")
	x.respond(http.StatusOK, false, "")
	x.end(observe.Complete, observe.Message{Kind: mcp.RPCResponse, ID: fmt.Sprint(id), TaskID: task, PollMS: pollMS})
}

// poll runs a tasks/get for task, answered at once on an SSE stream that
// gives pollMS again.
func (tl *timeline) poll(id int, task string, pollMS int64) {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"taskId":%q,"status":"working","pollIntervalMs":%d}}`, id, task, pollMS)
	tl.request("POST", "/mcp", mcp.StreamPost, "", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tasks/get","params":{"taskId":%q,"_meta":{%q:%q}}}`, id, task, mcp.MetaProtocolVersion, mcp.RevStateless),
		header(mcp.HeaderProtocol, mcp.RevStateless), header(mcp.HeaderMethod, "tasks/get")).
		stream200().send(noID(ev{data: body})).end(observe.Complete)
}

func TestStatelessTaskPolling(t *testing.T) {
	tell(t, newStateless, (*timeline).final, []story{
		{"polls at the interval: pass", func(tl *timeline) {
			tl.taskCreated(1, "t-1", 200)
			for id := 2; id <= 4; id++ {
				tl.wait(200 * ms)
				tl.poll(id, "t-1", 200)
			}
		}, func(t *testing.T, r report.Report) {
			if c := expect(t, r, checks.ClientTaskPollInterval, report.StatusPass, 0); c.Applied != 3 {
				t.Errorf("%d polls judged, want 3", c.Applied)
			}
		}},
		{"polls faster than asked: a warning per poll", func(tl *timeline) {
			tl.taskCreated(1, "t-1", 500)
			tl.wait(500 * ms)
			tl.poll(2, "t-1", 500)
			tl.wait(100 * ms)
			tl.poll(3, "t-1", 500)
			tl.wait(100 * ms)
			tl.poll(4, "t-1", 500)
		}, all(is(checks.ClientTaskPollInterval, report.StatusWarn, 2), verdict(report.VerdictPass, ""))},
		{"a new interval holds from the next poll", func(tl *timeline) {
			tl.taskCreated(1, "t-1", 500)
			tl.wait(500 * ms)
			tl.poll(2, "t-1", 100)
			tl.wait(100 * ms)
			tl.poll(3, "t-1", 100)
		}, is(checks.ClientTaskPollInterval, report.StatusPass, 0)},
	})
	t.Run("2025-11-25 traffic is not judged", func(t *testing.T) {
		tl := initialized(t)
		tl.call("s1", 1, "tools/call").jsonAnswer("1")
		expect(t, tl.final(), checks.ClientTaskPollInterval, report.StatusSkip, 0)
	})
}

// accel answers with an SSE stream whose X-Accel-Buffering is v ("" for
// none).
func accel(v string) respOpt {
	return func(o *observe.Observation) {
		o.Response.Header.Del(mcp.HeaderAccelBuffering)
		if v != "" {
			o.Response.Header.Set(mcp.HeaderAccelBuffering, v)
		}
	}
}

// TestAccelBuffering: an SSE answer to a request of 2026-07-28 carries
// X-Accel-Buffering: no, or is warned; a stream whose headers a fault
// changed is excused, and a 2025-11-25 stream is not judged.
func TestAccelBuffering(t *testing.T) {
	for _, tt := range []struct {
		name     string
		header   string
		fault    bool
		stateful bool
		status   string
		applied  int
	}{
		{"no", "no", false, false, report.StatusPass, 1},
		{"No, any case", "No", false, false, report.StatusPass, 1},
		{"missing", "", false, false, report.StatusWarn, 1},
		{"yes", "yes", false, false, report.StatusWarn, 1},
		{"stripped by a fault", "", true, false, report.StatusSkip, 0},
		{"2025-11-25", "", false, true, report.StatusSkip, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tl := newTimeline(t, Options{})
			var x *xch
			switch {
			case tt.stateful:
				tl.initialize("s1")
				x = tl.call("s1", 1, "tools/call")
			case tt.fault:
				x = tl.speakStateless().scall(1, "tools/call", "add", fired(fault(0, "strip-header")))
			default:
				x = tl.speakStateless().scall(1, "tools/call", "add")
			}
			x.stream200(accel(tt.header)).send(sresp(1)).end(observe.Complete)
			c := check(t, tl.final(), checks.ServerAccelBuffering)
			if c.Status != tt.status || c.Applied != tt.applied {
				t.Errorf("status %s applied %d, want %s and %d: %+v", c.Status, c.Applied, tt.status, tt.applied, c)
			}
		})
	}
}

// TestAccelBufferingEvidence: the evidence says what fray received, and
// that an intermediary between the server and fray may have removed or
// changed the header, naming the Via the answer came with.
func TestAccelBufferingEvidence(t *testing.T) {
	via := func(v string) respOpt {
		return func(o *observe.Observation) { o.Response.Header.Set("Via", v) }
	}
	for _, tt := range []struct {
		name string
		opts []respOpt
		want string
	}{
		{"missing", []respOpt{accel("")}, "fray received the SSE stream answering request 1 (tools/call) without X-Accel-Buffering, not X-Accel-Buffering: no: the server did not send it, or an intermediary between the server and fray removed it (nginx, for one, consumes it)"},
		{"missing behind a proxy", []respOpt{accel(""), via("1.1 edge")}, "fray received the SSE stream answering request 1 (tools/call) without X-Accel-Buffering, not X-Accel-Buffering: no: the server did not send it, or an intermediary between the server and fray removed it (nginx, for one, consumes it); the answer came through Via: 1.1 edge"},
		{"yes", []respOpt{accel("yes")}, "fray received the SSE stream answering request 1 (tools/call) with X-Accel-Buffering: yes, not X-Accel-Buffering: no: the server sent it so, or an intermediary between the server and fray changed it"},
		{"a long Via is cut", []respOpt{accel(""), via(strings.Repeat("v", 500))}, "; the answer came through Via: " + strings.Repeat("v", 120) + "..."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tl := newTimeline(t, Options{})
			tl.speakStateless().scall(1, "tools/call", "add").stream200(tt.opts...).send(sresp(1)).end(observe.Complete)
			c := expect(t, tl.final(), checks.ServerAccelBuffering, report.StatusWarn, 1)
			checkEvidence(t, c, func(e report.Evidence) bool { return !strings.HasSuffix(e.Message, tt.want) })
		})
	}
}

// TestVersionRefusal: a refusal for the revision (-32022) comes with 400;
// under another status, in a JSON body or an SSE stream, it fails; an
// answer that is no refusal is not judged.
func TestVersionRefusal(t *testing.T) {
	refusal := observe.Message{Kind: mcp.RPCError, ID: "1", ErrorCode: mcp.ErrUnsupportedVersion}
	for _, tt := range []struct {
		name    string
		run     func(x *xch)
		status  string
		applied int
	}{
		{"400", func(x *xch) { x.respond(http.StatusBadRequest, false, "").end(observe.Complete, refusal) }, report.StatusPass, 1},
		{"200", func(x *xch) { x.respond(http.StatusOK, false, "").end(observe.Complete, refusal) }, report.StatusFail, 1},
		{"in a stream", func(x *xch) {
			x.stream200(accel("no")).send(noID(ev{data: `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version"}}`})).end(observe.Complete)
		}, report.StatusFail, 1},
		{"another error", func(x *xch) {
			x.respond(http.StatusBadRequest, false, "").end(observe.Complete, observe.Message{Kind: mcp.RPCError, ID: "1", ErrorCode: -32602})
		}, report.StatusSkip, 0},
		{"a result", func(x *xch) { x.jsonAnswer("1") }, report.StatusSkip, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tl := newTimeline(t, Options{})
			tt.run(tl.speakStateless().scall(1, "tools/list", ""))
			c := check(t, tl.final(), checks.ServerUnsupportedVersion)
			if c.Status != tt.status || c.Applied != tt.applied {
				t.Errorf("status %s applied %d, want %s and %d: %+v", c.Status, c.Applied, tt.status, tt.applied, c)
			}
		})
	}
}

// TestArmedFaultsCountWhenTheyAct: an idle timeout armed as a stream
// starts is no fault fired until it ends a stream, and then the fault
// evidence names; a run where it never does has no fault fired.
func TestArmedFaultsCountWhenTheyAct(t *testing.T) {
	idle := respFired(fault(0, "idle-close"))
	for _, tt := range []struct {
		name  string
		cause observe.Cause
		want  int
	}{
		{"the stream ends first", observe.Complete, 0},
		{"the timeout ends the stream", observe.FaultClosed, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tl := newTimeline(t, Options{})
			tl.speakStateless().scall(1, "tools/call", "add").stream200(accel("no"), idle).send(sprogress(1)).end(tt.cause)
			tl.wait(2 * time.Second)
			r := tl.final()
			n := 0
			for _, f := range r.Faults {
				n += f.Count
			}
			if n != tt.want {
				t.Errorf("faults fired %v, want %d idle-close", r.Faults, tt.want)
			}
			// The timeout's cut owes a re-issue, and the evidence names it.
			c := check(t, r, checks.ClientReissuesCutRequest)
			if tt.want == 1 && (len(c.Evidence) != 1 || c.Evidence[0].Fault == nil || c.Evidence[0].Fault.Kind != "idle-close") {
				t.Errorf("%s evidence %+v, want the idle-close fault", c.ID, c.Evidence)
			}
		})
	}
}
