package verify

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
)

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
			if len(c.Evidence) == 1 && !strings.HasSuffix(c.Evidence[0].Message, tt.want) {
				t.Errorf("evidence %q\nwant it to end with %q", c.Evidence[0].Message, tt.want)
			}
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
