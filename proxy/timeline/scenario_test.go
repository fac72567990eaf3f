package timeline

import (
	"fmt"
	"net/http"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
	"github.com/frayproxy/fray/proxy/trace"
	"github.com/frayproxy/fray/proxy/verify"
)

// scenario is a small run that shows what a timeline must explain: a
// tools/call stream whose event 2 is hit by two faults at once (delay and
// duplicate), and which a third fault resets in place of event 3; the
// client reconnects 19 ms after the cut although it was given retry
// 500 ms; the server replays event 3 and closes the resumed stream before
// the response, so request 2 is never answered. A second call has faults on two neighbouring events and
// is answered. The client command exits 1. The verdict is the verifier's.
type scenario struct {
	obs     []*observe.Observation
	end     time.Duration
	report  *report.Report
	command []string
	exit    int
}

// scenarioObs builds observations of one session by hand.
type scenarioObs struct{ obs []*observe.Observation }

func (s *scenarioObs) add(kind observe.Kind, ms float64, ex uint64, st mcp.StreamType) *observe.Observation {
	o := &observe.Observation{Kind: kind, At: time.Duration(ms * float64(time.Millisecond)), Exchange: ex, Stream: st,
		Session: "7f3a", SessionSeq: 1, Protocol: "2025-11-25"}
	s.obs = append(s.obs, o)
	return o
}

func (s *scenarioObs) post(ms float64, ex uint64, kind mcp.RPCKind, method, id string) {
	o := s.add(observe.KindRequest, ms, ex, mcp.StreamPost)
	o.Request = &observe.Request{Method: "POST", Path: "/mcp", Header: http.Header{"Accept": {"application/json, text/event-stream"}},
		Messages: []observe.Message{{Kind: kind, Method: method, ID: id}}}
}

func (s *scenarioObs) get(ms float64, ex uint64, st mcp.StreamType, lei string) {
	o := s.add(observe.KindRequest, ms, ex, st)
	o.Request = &observe.Request{Method: "GET", Path: "/mcp", Header: http.Header{"Accept": {"text/event-stream"}}}
	if lei != "" {
		o.Request.LastEventID, o.Request.HasLastEventID = lei, true
	}
}

func (s *scenarioObs) response(ms float64, ex uint64, st mcp.StreamType, status int, stream bool) {
	o := s.add(observe.KindResponse, ms, ex, st)
	o.Response = &observe.Response{Status: status, EventStream: stream, Session: "7f3a"}
}

// eventMessage is the JSON-RPC identity of a scenario's event.
type eventMessage struct {
	Kind       mcp.RPCKind
	Method, ID []byte
}

// ev is one event; fired faults are attached by the caller.
func (s *scenarioObs) ev(ms float64, ex uint64, st mcp.StreamType, index int, id string, msg eventMessage, retry int64) *observe.Observation {
	o := s.add(observe.KindEvent, ms, ex, st)
	e := &observe.Event{Event: mcp.Event{Index: index, Parsed: true, ID: []byte(id), HasID: id != "",
		RPCKind: msg.Kind, RPCMethod: msg.Method, RPCID: msg.ID, Dispatched: msg.Kind != mcp.RPCNone},
		Fate: observe.Delivered, DeliveredAt: o.At, DeliveredID: []byte(id), DeliveredHasID: id != "", Copies: 1}
	if retry > 0 {
		e.Retry, e.HasRetry, e.DeliveredRetry, e.DeliveredHasRetry = retry, true, retry, true
	}
	e.Priming = id != "" && msg.Kind == mcp.RPCNone
	e.Raw = []byte(fmt.Sprintf("id: %s\ndata: {}\n\n", id))
	o.Event = e
	return o
}

func (s *scenarioObs) end(ms float64, ex uint64, st mcp.StreamType, c observe.Cause, msgs ...observe.Message) {
	o := s.add(observe.KindEnd, ms, ex, st)
	o.End = &observe.End{Cause: c, Messages: msgs}
}

func progress() eventMessage {
	return eventMessage{Kind: mcp.RPCNotification, Method: []byte("notifications/progress")}
}

func result(id string) eventMessage {
	return eventMessage{Kind: mcp.RPCResponse, ID: []byte(id)}
}

func newScenario() scenario {
	var s scenarioObs
	const post, get, resume = mcp.StreamPost, mcp.StreamGet, mcp.StreamResume
	s.post(1, 1, mcp.RPCRequest, "initialize", "1")
	s.response(4, 1, post, 200, false)
	s.end(4.2, 1, post, observe.Complete, observe.Message{Kind: mcp.RPCResponse, ID: "1"})
	s.post(6, 2, mcp.RPCNotification, "notifications/initialized", "")
	s.response(6.5, 2, post, 202, false)
	s.end(6.6, 2, post, observe.Complete)

	s.get(8, 3, get, "")
	s.response(9, 3, get, 200, true)
	s.ev(120, 3, get, 0, "", eventMessage{Kind: mcp.RPCNotification, Method: []byte("notifications/tools/list_changed")}, 0)

	s.post(20, 4, mcp.RPCRequest, "tools/call", "2")
	s.response(23, 4, post, 200, true)
	s.ev(24, 4, post, 0, "4_0", eventMessage{}, 500)
	s.ev(60, 4, post, 1, "4_1", progress(), 0)
	held := s.ev(100, 4, post, 2, "4_2", progress(), 0)
	held.Fired = []faults.Firing{{Index: 0, Kind: "delay"}, {Index: 1, Kind: "duplicate"}}
	held.Event.DeliveredAt, held.Event.Copies = 250*time.Millisecond, 2
	cut := s.ev(262, 4, post, 3, "4_3", progress(), 0)
	cut.Fired = []faults.Firing{{Index: 2, Kind: "reset"}}
	cut.Event.Fate, cut.Event.DeliveredAt, cut.Event.DeliveredID, cut.Event.DeliveredHasID, cut.Event.Copies = observe.Cut, 0, nil, false, 0
	s.end(262, 4, post, observe.FaultReset)

	s.get(281, 5, resume, "4_2")
	s.response(284, 5, resume, 200, true)
	s.ev(285, 5, resume, 0, "5_0", eventMessage{}, 500)
	s.ev(286, 5, resume, 1, "4_3", progress(), 0)
	s.end(300, 5, resume, observe.Complete)

	s.post(420, 6, mcp.RPCRequest, "tools/call", "3")
	s.response(423, 6, post, 200, true)
	s.ev(424, 6, post, 0, "6_0", eventMessage{}, 500)
	drop := s.ev(470, 6, post, 1, "6_1", progress(), 0)
	drop.Fired = []faults.Firing{{Index: 3, Kind: "drop"}}
	drop.Event.Fate, drop.Event.DeliveredAt, drop.Event.DeliveredID, drop.Event.DeliveredHasID, drop.Event.Copies = observe.Dropped, 0, nil, false, 0
	strip := s.ev(472, 6, post, 2, "6_2", progress(), 0)
	strip.Fired = []faults.Firing{{Index: 4, Kind: "strip-id"}}
	strip.Event.DeliveredID, strip.Event.DeliveredHasID, strip.Event.Delivered = nil, false, []byte("data: {}\n\n")
	s.ev(520, 6, post, 3, "6_3", result("3"), 0)
	s.end(521, 6, post, observe.Complete)

	s.end(840, 3, get, observe.ClientGone)

	end := 850 * time.Millisecond
	v := verify.New(verify.Options{})
	for _, o := range s.obs {
		v.Observe(o)
	}
	rep := v.Final(end)
	rep.Profile, rep.Seed = "flaky-stream", 7
	rep.Command = &report.Command{Args: []string{"node", "client.mjs", "--call", "slow-tool"}, ExitCode: 1}
	return scenario{obs: s.obs, end: end, report: &rep, command: rep.Command.Args, exit: 1}
}

// input is what fray report --html would draw the scenario from.
func (sc scenario) input() Input {
	return Input{
		Header:       trace.Header{Version: trace.Version, Profile: "flaky-stream", Seed: 7, Started: time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC)},
		Observations: sc.obs, End: sc.end, Report: sc.report, Command: sc.command, ExitCode: sc.exit,
	}
}
