package timeline

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
)

// laneOf returns the index of exchange ex's lane.
func laneOf(t *testing.T, m *Model, ex uint64) int {
	t.Helper()
	for i, l := range m.Lanes {
		if l.Exchange == ex {
			return i
		}
	}
	t.Fatalf("no lane for exchange %d", ex)
	return -1
}

func TestExplainScenario(t *testing.T) {
	sc := newScenario()
	m := Build(sc.input())
	ms := func(v float64) int64 { return int64(v * 1000) }

	t.Run("unanswered", func(t *testing.T) {
		if len(m.Unanswered) != 1 {
			t.Fatalf("unanswered = %+v, want request 2 only", m.Unanswered)
		}
		u := m.Unanswered[0]
		if u.Lane != laneOf(t, m, 4) || u.ID != "2" || u.Method != "tools/call" || u.AtUS != ms(20) {
			t.Errorf("unanswered = %+v, want request 2 (tools/call) of exchange 4 at 20ms", u)
		}
		if !strings.HasPrefix(u.Finding, "request 2 (tools/call) got no response") {
			t.Errorf("finding = %q, want the verifier's evidence", u.Finding)
		}
	})
	t.Run("responses", func(t *testing.T) {
		var got []uint64
		for i, fl := range m.Events.Flags {
			if fl&flagResponse != 0 {
				got = append(got, m.Lanes[m.Events.Lane[i]].Exchange)
			}
		}
		if !slices.Equal(got, []uint64{6}) || m.Lanes[laneOf(t, m, 1)].Answers != 1 {
			t.Errorf("response events on exchanges %v, JSON answers on exchange 1: %d; want [6] and 1", got, m.Lanes[laneOf(t, m, 1)].Answers)
		}
	})
	t.Run("windows", func(t *testing.T) {
		want := []Window{
			{Lane: laneOf(t, m, 4), FromUS: ms(262), ToUS: ms(762), RetryMS: 500, RetryLane: laneOf(t, m, 4), Reconnect: laneOf(t, m, 5), ReconnectUS: ms(281), Early: true},
			{Lane: laneOf(t, m, 5), FromUS: ms(300), ToUS: ms(800), RetryMS: 500, RetryLane: laneOf(t, m, 5), Reconnect: -1},
		}
		if !slices.Equal(m.Windows, want) {
			t.Errorf("windows\n got %+v\nwant %+v", m.Windows, want)
		}
	})
	t.Run("fault effects", func(t *testing.T) {
		var got []string
		for i := range m.Faults.Lane {
			got = append(got, m.Strings[m.Faults.Kind[i]]+": "+m.Strings[m.Faults.Effect[i]])
		}
		want := []string{"delay: held the event 150ms", "duplicate: wrote the event 2 times",
			"reset: reset the connection instead of writing the event", "drop: dropped the event", `strip-id: removed the id "6_2"`}
		if !slices.Equal(got, want) {
			t.Errorf("effects\n got %q\nwant %q", got, want)
		}
	})
	t.Run("run marks", func(t *testing.T) {
		want := []RunMark{{AtUS: ms(850), Kind: "end", Label: "end of run", Detail: "the run stopped observing at 850ms"}}
		if !slices.Equal(m.Run, want) {
			t.Errorf("run = %+v, want %+v", m.Run, want)
		}
	})
	t.Run("command", func(t *testing.T) {
		if !slices.Equal(m.Command, sc.command) || m.ExitCode != 1 {
			t.Errorf("command %q exit %d, want %q exit 1", m.Command, m.ExitCode, sc.command)
		}
		// Without the trace's, the report's.
		in := sc.input()
		in.Command, in.ExitCode = nil, 0
		in.Report.Command = &report.Command{Args: []string{"client"}, ExitCode: 3}
		if m := Build(in); !slices.Equal(m.Command, []string{"client"}) || m.ExitCode != 3 {
			t.Errorf("command from the report: %q exit %d", m.Command, m.ExitCode)
		}
	})
	t.Run("checks", func(t *testing.T) {
		if len(m.Checks) != len(sc.report.Checks) {
			t.Fatalf("%d checks, want %d", len(m.Checks), len(sc.report.Checks))
		}
		rank := map[string]int{"fail": 0, "warn": 1, "pass": 2, "skip": 3}
		for i := 1; i < len(m.Checks); i++ {
			if rank[m.Checks[i-1].Status] > rank[m.Checks[i].Status] {
				t.Errorf("check %s (%s) before %s (%s)", m.Checks[i-1].ID, m.Checks[i-1].Status, m.Checks[i].ID, m.Checks[i].Status)
			}
		}
		if m.Checks[0].ID != "client.retry-honoured" || m.Checks[1].ID != "e2e.every-request-answered" {
			t.Errorf("failed checks not first, in catalog order: %s, %s", m.Checks[0].ID, m.Checks[1].ID)
		}
	})
}

func TestChecksOrder(t *testing.T) {
	r := &report.Report{Checks: []report.Check{
		{ID: "a", Status: report.StatusPass}, {ID: "b", Status: "odd"}, {ID: "c", Status: report.StatusSkip},
		{ID: "d", Status: report.StatusWarn, Excused: []report.Excuse{{Reason: "cancelled by the client", Count: 2}}},
		{ID: "e", Status: report.StatusFail}, {ID: "f", Status: report.StatusPass},
	}}
	var got []string
	for _, c := range checks(r) {
		got = append(got, c.ID)
	}
	if want := []string{"e", "d", "a", "f", "c", "b"}; !slices.Equal(got, want) {
		t.Errorf("order %q, want %q", got, want)
	}
	if c := checks(r)[1]; !slices.Equal(c.Excused, []string{"cancelled by the client (2)"}) {
		t.Errorf("excused = %q", c.Excused)
	}
}

// TestWindowsStandalone: a standalone GET stream the server closes owes
// the session's traffic, so its end opens a retry window, and the next
// GET of the session is its reconnection, whether it resumes or not; the
// client keeps the retry across reconnections.
func TestWindowsStandalone(t *testing.T) {
	var b scenarioObs
	const get, resume = mcp.StreamGet, mcp.StreamResume
	b.get(0, 1, get, "")
	b.response(0, 1, get, 200, true)
	b.ev(1, 1, get, 0, "g1", eventMessage{}, 100)
	b.end(10, 1, get, observe.Complete) // the server closed it
	b.get(150, 2, get, "")              // after the 100 ms window
	b.response(150, 2, get, 200, true)
	b.ev(151, 2, get, 0, "g2", eventMessage{}, 0)
	b.end(200, 2, get, observe.FaultClosed)
	b.get(230, 3, resume, "g2") // resumes 30 ms after, inside the 100 ms it kept
	b.response(230, 3, resume, 200, true)
	b.end(300, 3, resume, observe.ClientGone)
	m := Build(Input{Observations: b.obs, End: 400 * time.Millisecond})
	want := []Window{
		{Lane: 0, FromUS: 10_000, ToUS: 110_000, RetryMS: 100, RetryLane: 0, Reconnect: 1, ReconnectUS: 150_000},
		{Lane: 1, FromUS: 200_000, ToUS: 300_000, RetryMS: 100, RetryLane: 0, Reconnect: 2, ReconnectUS: 230_000, Early: true},
	}
	if !slices.Equal(m.Windows, want) {
		t.Errorf("windows\n got %+v\nwant %+v", m.Windows, want)
	}
	// Without a retry the client was told nothing to wait for: no window.
	b.obs[2].Event.DeliveredHasRetry = false
	if m := Build(Input{Observations: b.obs[:4]}); len(m.Windows) != 0 {
		t.Errorf("windows without a retry: %+v", m.Windows)
	}
}

// TestWindowsNeedAnOwedResponse: a POST stream that ends after its
// response, or that the client left, opens no window; one that ends
// before it does, and its resumption inherits the retry.
func TestWindowsNeedAnOwedResponse(t *testing.T) {
	var b scenarioObs
	const post, resume = mcp.StreamPost, mcp.StreamResume
	call := func(ms float64, ex uint64, id string) {
		b.post(ms, ex, mcp.RPCRequest, "tools/call", id)
		b.response(ms, ex, post, 200, true)
	}
	call(0, 1, "1")
	b.ev(1, 1, post, 0, "p1", eventMessage{}, 40)
	b.ev(2, 1, post, 1, "", result("1"), 0)
	b.end(3, 1, post, observe.Complete) // answered: no window
	call(10, 2, "2")
	b.ev(11, 2, post, 0, "p2", eventMessage{}, 40)
	b.end(12, 2, post, observe.ClientGone) // the client left: no window
	call(20, 3, "3")
	b.ev(21, 3, post, 0, "p3", eventMessage{}, 40)
	b.end(22, 3, post, observe.Complete) // closed before the response
	b.get(100, 4, resume, "p3")          // after the window
	b.response(100, 4, resume, 200, true)
	b.end(101, 4, resume, observe.Complete) // still owes request 3
	m := Build(Input{Observations: b.obs})
	want := []Window{
		{Lane: 2, FromUS: 22_000, ToUS: 62_000, RetryMS: 40, RetryLane: 2, Reconnect: 3, ReconnectUS: 100_000},
		{Lane: 3, FromUS: 101_000, ToUS: 141_000, RetryMS: 40, RetryLane: 2, Reconnect: -1},
	}
	if !slices.Equal(m.Windows, want) {
		t.Errorf("windows\n got %+v\nwant %+v", m.Windows, want)
	}
	var ids []string
	for _, u := range m.Unanswered {
		ids = append(ids, u.ID)
	}
	if !slices.Equal(ids, []string{"2", "3"}) {
		t.Errorf("unanswered %q, want requests 2 and 3", ids)
	}
}

func TestFaultEffects(t *testing.T) {
	ev := func(f func(e *observe.Event)) *observe.Observation {
		e := &observe.Event{Event: mcp.Event{Parsed: true, ID: []byte("7"), HasID: true}, Fate: observe.Delivered, Copies: 1, DeliveredAt: 2100 * time.Millisecond, DeliveredID: []byte("7"), DeliveredHasID: true}
		f(e)
		return &observe.Observation{Kind: observe.KindEvent, At: 100 * time.Millisecond, Event: e}
	}
	req := func(f func(r *observe.Request)) *observe.Observation {
		r := &observe.Request{Method: "GET", LastEventID: "41", HasLastEventID: true}
		f(r)
		return &observe.Observation{Kind: observe.KindRequest, Request: r}
	}
	resp := func(r observe.Response) *observe.Observation {
		return &observe.Observation{Kind: observe.KindResponse, Response: &r}
	}
	none := func(*observe.Event) {}
	for _, c := range []struct {
		kind string
		o    *observe.Observation
		want string
	}{
		{"drop", ev(func(e *observe.Event) { e.Fate = observe.Dropped }), "dropped the event"},
		{"delay", ev(none), "held the event 2s"},
		{"duplicate", ev(func(e *observe.Event) { e.Copies = 3 }), "wrote the event 3 times"},
		{"strip-retry", ev(func(e *observe.Event) { e.Retry, e.HasRetry = 500, true }), "removed retry: 500 ms"},
		{"set-retry", ev(func(e *observe.Event) { e.DeliveredRetry, e.DeliveredHasRetry = 10, true }), "set retry to 10 ms"},
		{"strip-id", ev(func(e *observe.Event) { e.DeliveredHasID = false }), `removed the id "7"`},
		{"rewrite-id", ev(func(e *observe.Event) { e.DeliveredID = []byte("x-7") }), `rewrote the id "7" to "x-7"`},
		{"close", ev(none), "closed the stream after the event"},
		{"close", ev(func(e *observe.Event) { e.Fate = observe.Cut }), "closed the stream instead of writing the event"},
		{"stall", ev(func(e *observe.Event) { e.Fate = observe.Stalled }), "stalled the stream for ever before the event"},
		{"stall", ev(func(e *observe.Event) { e.DeliveredAt = 350 * time.Millisecond }), "stalled the stream 250ms before the event"},
		{"throttle", resp(observe.Response{Throttle: 512}), "throttled the stream to 512 bytes/s"},
		{"close", resp(observe.Response{CloseAfter: 5 * time.Second}), "closed the stream 5s after it began"},
		{"latency", req(func(r *observe.Request) { r.Action.Latency = 300 * time.Millisecond }), "held the request 300ms before forwarding it"},
		{"strip-last-event-id", req(func(r *observe.Request) {}), `removed Last-Event-ID "41"`},
		{"rewrite-last-event-id", req(func(r *observe.Request) {
			r.Action.ForwardedLastEventID, r.Action.HasForwardedLastEventID = "9", true
		}), `rewrote Last-Event-ID "41" to "9"`},
		{"strip-header", req(func(r *observe.Request) { r.Action.StrippedHeaders = []string{"Mcp-Session-Id"} }), "removed the header Mcp-Session-Id"},
	} {
		o := *c.o
		o.Exchange, o.Fired = 1, []faults.Firing{{Index: 4, Kind: c.kind}}
		m := Build(Input{Observations: []*observe.Observation{&o}})
		if len(m.Faults.Effect) != 1 {
			t.Errorf("%s: %d fault marks, want 1", c.kind, len(m.Faults.Effect))
			continue
		}
		if got := m.Strings[m.Faults.Effect[0]]; got != c.want {
			t.Errorf("%s: effect %q, want %q", c.kind, got, c.want)
		}
	}
}

// TestFaultAnsweredOnce: when fray answers in place of the upstream, the
// response observation repeats the request's firings; the page shows each
// firing once, with the status it answered.
func TestFaultAnsweredOnce(t *testing.T) {
	fired := []faults.Firing{{Index: 0, Kind: "status"}}
	obs := []*observe.Observation{
		{Kind: observe.KindRequest, Exchange: 1, Fired: fired, Request: &observe.Request{Method: "POST",
			Messages: []observe.Message{{Kind: mcp.RPCRequest, Method: "tools/call", ID: "5"}}, Action: observe.RequestAction{Answered: true}}},
		{Kind: observe.KindResponse, Exchange: 1, Fired: fired, Response: &observe.Response{Status: 503, Origin: observe.FromFault}},
		{Kind: observe.KindEnd, Exchange: 1, End: &observe.End{Cause: observe.FaultAnswered}},
	}
	m := Build(Input{Observations: obs})
	if len(m.Faults.Lane) != 1 || m.Strings[m.Faults.Effect[0]] != "answered 503 instead of forwarding the request" {
		t.Errorf("%d fault marks, effects %v", len(m.Faults.Lane), m.Faults.Effect)
	}
	if len(m.Unanswered) != 1 || m.Unanswered[0].ID != "5" {
		t.Errorf("unanswered = %+v, want request 5", m.Unanswered)
	}
	if len(m.Windows) != 0 {
		t.Errorf("windows = %+v for an exchange that was no stream", m.Windows)
	}
}

// TestRunMarks: the end of the run is a run-level mark; an observation of
// no exchange makes no lane.
func TestRunMarks(t *testing.T) {
	obs := []*observe.Observation{
		{Kind: observe.KindRequest, At: time.Millisecond, Exchange: 1, Request: &observe.Request{Method: "GET"}},
		{Kind: observe.KindNone, At: 2 * time.Millisecond},
	}
	m := Build(Input{Observations: obs, End: 1500 * time.Millisecond})
	if len(m.Lanes) != 1 {
		t.Errorf("%d lanes, want 1", len(m.Lanes))
	}
	want := []RunMark{{AtUS: 1_500_000, Kind: "end", Label: "end of run", Detail: "the run stopped observing at 1.5s"}}
	if !slices.Equal(m.Run, want) {
		t.Errorf("run = %+v, want %+v", m.Run, want)
	}
	if m := Build(Input{Observations: obs}); len(m.Run) != 0 {
		t.Errorf("run without an end = %+v", m.Run)
	}
}

// TestProfileChangesAreRunMarks: a change of the profile in force, which
// belongs to no exchange, is a mark across the whole run, in time order
// with the end of the run.
func TestProfileChangesAreRunMarks(t *testing.T) {
	in := Input{End: 3 * time.Second, Observations: []*observe.Observation{
		{Kind: observe.KindProfile, At: time.Second, Profile: &observe.ProfileChange{Action: observe.ProfileSwap, Name: "swapped", Seed: 9}},
		{Kind: observe.KindProfile, At: 2 * time.Second, Profile: &observe.ProfileChange{Action: observe.ProfileDisable, Name: "swapped", Seed: 9, Fault: 1}},
	}}
	m := Build(in)
	var got []string
	for _, r := range m.Run {
		got = append(got, fmt.Sprintf("%s@%d %s", r.Kind, r.AtUS, r.Label))
	}
	want := []string{"profile@1000000 profile swapped", "profile@2000000 fault 1 off", "end@3000000 end of run"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("run marks %q, want %q", got, want)
	}
	if len(m.Lanes) != 0 {
		t.Errorf("profile changes made %d lanes, want none", len(m.Lanes))
	}
}
