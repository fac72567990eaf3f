package verify

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
)

// TestObserveConcurrently: exchanges observed from many goroutines at
// once, with Progress and Report read meanwhile, are all counted (run
// with -race).
func TestObserveConcurrently(t *testing.T) {
	v := New(Options{})
	const workers, calls = 8, 50
	var wg sync.WaitGroup
	var clock sync.Mutex
	now := time.Duration(0)
	tick := func() time.Duration {
		clock.Lock()
		defer clock.Unlock()
		now += time.Millisecond
		return now
	}
	for w := range workers {
		wg.Go(func() {
			sess := fmt.Sprintf("s%d", w)
			for i := range calls {
				ex := uint64(w*calls + i + 1)
				h := http.Header{}
				h.Set("Mcp-Session-Id", sess)
				id := fmt.Sprint(i + 1)
				o := &observe.Observation{Kind: observe.KindRequest, At: tick(), Exchange: ex, Stream: mcp.StreamPost, Session: sess, SessionSeq: w + 1,
					Request: &observe.Request{Method: "POST", Path: "/mcp", Header: h, Messages: []observe.Message{{Kind: mcp.RPCRequest, Method: "tools/list", ID: id}}}}
				v.Observe(o)
				o = &observe.Observation{Kind: observe.KindResponse, At: tick(), Exchange: ex, Stream: mcp.StreamPost, Session: sess, SessionSeq: w + 1,
					Response: &observe.Response{Status: 200}}
				v.Observe(o)
				o = &observe.Observation{Kind: observe.KindEnd, At: tick(), Exchange: ex, Stream: mcp.StreamPost, Session: sess, SessionSeq: w + 1,
					End: &observe.End{Cause: observe.Complete, Messages: []observe.Message{{Kind: mcp.RPCResponse, ID: id}}}}
				v.Observe(o)
				if i%10 == 0 {
					_ = v.Progress()
					_ = v.Report(tick())
				}
			}
		})
	}
	wg.Wait()
	if p := v.Progress(); p.Exchanges != workers*calls {
		t.Errorf("progress %+v, want %d exchanges", p, workers*calls)
	}
	r := v.Final(tick())
	// Every session id was first seen in a request, never issued: the
	// server's 200s are findings of server.unknown-session-404, and only
	// of it.
	if c := check(t, r, checks.E2EEveryRequestAnswered); c.Applied != workers*calls || c.Count != 0 {
		t.Errorf("every-request-answered %+v", c)
	}
	if c := check(t, r, checks.ServerUnknownSession404); c.Count != workers*calls {
		t.Errorf("unknown-session-404 found %d, want %d", c.Count, workers*calls)
	}
}

// TestArbitraryObservationsNeverPanic feeds seeded random sequences of
// observations (exchanges out of order, ends without requests, events
// after ends, odd fields) and reads the report after each batch: a trace
// replayed offline may hold anything.
func TestArbitraryObservationsNeverPanic(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 7))
		v := New(Options{AnswerDeadline: time.Duration(1+r.IntN(3)) * time.Second})
		at := time.Duration(0)
		for i := range 3000 {
			at += time.Duration(r.IntN(400)) * time.Millisecond
			v.Observe(randomObservation(r, at))
			if i%500 == 0 {
				checkReport(t, v.Report(at))
			}
		}
		checkReport(t, v.Final(at))
	}
}

func checkReport(t *testing.T, r report.Report) {
	t.Helper()
	if len(r.Checks) != len(checks.Catalog()) || r.Verdict == "" {
		t.Fatalf("malformed report %+v", r)
	}
	for _, c := range r.Checks {
		if len(c.Evidence) > report.MaxEvidence || c.Count < len(c.Evidence) {
			t.Fatalf("%s: %d evidence for %d findings", c.ID, len(c.Evidence), c.Count)
		}
	}
}

func randomObservation(r *rand.Rand, at time.Duration) *observe.Observation {
	pick := func(s ...string) string { return s[r.IntN(len(s))] }
	sessions := []string{"", "s1", "s2", "s3"}
	sess := sessions[r.IntN(len(sessions))]
	o := &observe.Observation{
		Kind:     observe.Kind(1 + r.IntN(4)),
		At:       at,
		Exchange: uint64(1 + r.IntN(40)),
		Stream:   mcp.StreamType(1 + r.IntN(5)),
		Session:  sess,
		Protocol: pick("", "2024-11-05", "2025-03-26", "2025-11-25", "2026-07-28"),
	}
	if sess != "" {
		o.SessionSeq = int(sess[1] - '0')
	}
	if r.IntN(4) == 0 {
		kind := pick("drop", "lose", "close", "reset", "status", "set-retry", "rewrite-id", "nope")
		k, _ := faults.LookupKind(kind)
		o.Fired = []faults.Firing{{Index: r.IntN(3), Kind: kind, Traits: k.Traits | faults.Traits(r.Uint32())}}
	}
	ids := []string{"", "1", "2", "3", "a", "b"}
	switch o.Kind {
	case observe.KindRequest:
		h := http.Header{}
		if sess != "" && r.IntN(3) > 0 {
			h.Set("Mcp-Session-Id", sess)
		}
		q := &observe.Request{Method: pick("GET", "POST", "DELETE"), Path: pick("/mcp", "/sse"), Header: h}
		if r.IntN(2) == 0 {
			q.HasLastEventID, q.LastEventID = true, ids[r.IntN(len(ids))]
		}
		for range r.IntN(3) {
			q.Messages = append(q.Messages, observe.Message{Kind: mcp.RPCKind(r.IntN(5)), Method: pick("initialize", "tools/call", ""), ID: pick("1", "2", `"x"`)})
		}
		if r.IntN(5) == 0 {
			q.Cancels = []string{pick("1", "2")}
		}
		q.Action = observe.RequestAction{Answered: r.IntN(6) == 0, Dropped: r.IntN(8) == 0, LastEventIDChanged: r.IntN(6) == 0,
			HasForwardedLastEventID: r.IntN(2) == 0, ForwardedLastEventID: ids[r.IntN(len(ids))]}
		o.Request = q
	case observe.KindResponse:
		o.Response = &observe.Response{Status: []int{200, 202, 404, 500, 503}[r.IntN(5)], Origin: observe.Origin(r.IntN(3)),
			EventStream: r.IntN(2) == 0, Session: pick("", "s1", "s4")}
	case observe.KindEvent:
		id := ids[r.IntN(len(ids))]
		data := pick("", `{"jsonrpc":"2.0","id":1,"result":{}}`, `{"jsonrpc":"2.0","method":"n"}`)
		e := &observe.Event{Event: mcp.Event{Index: r.IntN(5), Raw: []byte("id: " + id + "\ndata: " + data + "\n\n"), Parsed: r.IntN(10) > 0, ID: []byte(id), HasID: r.IntN(3) > 0, Priming: data == "" && id != "", Dispatched: data != "", Retry: int64(r.IntN(1000)), HasRetry: r.IntN(3) == 0}, Fate: observe.Fate(r.IntN(6)), Copies: r.IntN(3), Corrupted: r.IntN(10) == 0, DeliveredID: []byte(ids[r.IntN(len(ids))]), DeliveredHasID: r.IntN(2) == 0, DeliveredRetry: int64(r.IntN(1000)), DeliveredHasRetry: r.IntN(3) == 0}
		if data != "" {
			e.RPCKind, e.RPCID = mcp.RPCKind(r.IntN(5)), []byte(pick("1", "2"))
		}
		o.Event = e
	case observe.KindEnd:
		o.End = &observe.End{Cause: observe.Cause(r.IntN(6))}
		if r.IntN(3) == 0 {
			o.End.Messages = []observe.Message{{Kind: mcp.RPCResponse, ID: pick("1", "2")}}
		}
	}
	return o
}

// TestHappyPathPassesEveryAppliedCheck: a session whose streams are
// primed, whose answers all arrive, and which nothing disturbs, passes.
func TestHappyPathPassesEveryAppliedCheck(t *testing.T) {
	tl := initializedWith(t, Options{Profile: "none", Seed: 7})
	tl.wait(5 * ms)
	tl.notify("s1", `{"jsonrpc":"2.0","method":"notifications/initialized"}`).respond(202, false, "").end(observe.Complete)
	tl.toolCall("s1", 1, "a1", "a2", "a3")
	tl.wait(10 * ms)
	tl.toolCall("s1", 2, "b1", "b2", "b3")
	tl.call("s1", 3, "tools/list").jsonAnswer("3")
	r := tl.final()
	if r.Verdict != report.VerdictPass {
		t.Errorf("verdict %s, want pass: %+v", r.Verdict, r.Checks)
	}
	if r.Profile != "none" || r.Seed != 7 || r.Schema != report.SchemaVersion {
		t.Errorf("header %+v", r)
	}
	for _, c := range r.Checks {
		if c.Count != 0 {
			t.Errorf("%s: %d findings: %+v", c.ID, c.Count, c.Evidence)
		}
	}
	expect(t, r, checks.ServerPrimingEvent, report.StatusPass, 0)
	expect(t, r, checks.ServerEventIDsUnique, report.StatusPass, 0)
	expect(t, r, checks.E2EEveryRequestAnswered, report.StatusPass, 0)
	expect(t, r, checks.E2ENoMessageLost, report.StatusPass, 0)
	expect(t, r, checks.E2ENoMessageDuplicated, report.StatusPass, 0)
	expect(t, r, checks.ClientReconnects, report.StatusSkip, 0)
	if a := check(t, r, checks.E2EEveryRequestAnswered).Applied; a != 4 {
		t.Errorf("every-request-answered applied %d times, want 4", a)
	}
	if r.Totals.Sessions != 1 || r.Totals.Streams != 2 || r.Totals.Events != 6 || r.Totals.Exchanges != 5 {
		t.Errorf("totals %+v", r.Totals)
	}
	if len(r.Checks) != len(checks.Catalog()) {
		t.Errorf("%d checks, want %d", len(r.Checks), len(checks.Catalog()))
	}
	for i, c := range checks.Catalog() {
		if r.Checks[i].ID != c.ID {
			t.Errorf("check %d is %s, want %s", i, r.Checks[i].ID, c.ID)
		}
	}
}

// TestObserveRunIsObserve: a Verifier given a story's observations in runs
// (ObserveRun, as the engine's queue passes its events on) reports exactly
// what one given them one at a time reports, whatever the runs' length: a
// lost answer and its replay, a resumption, a response sent twice, a
// duplicate fault's copies and a silent request, in two sessions.
func TestObserveRunIsObserve(t *testing.T) {
	opts := Options{Profile: "story", Seed: 3}
	var log []observe.Observation
	tl := newTimeline(t, opts)
	tl.log = &log
	lostResponseOn(tl)
	tl.get("s1", "a2").stream200().send(note("a3")).send(resp("a4", 1)).end(observe.Complete)
	tl.initialize("s2")
	tl.toolCall("s2", 2, "b1", "b2", "b3")
	tl.call("s2", 3, "tools/call").stream200().send(prime("c1")).send(resp("c2", 3)).send(resp("c3", 3)).end(observe.Complete)
	dup := resp("d2", 4)
	dup.copies = 3
	dup.fired = append(dup.fired, fault(1, "duplicate"))
	tl.call("s1", 4, "tools/call").stream200().send(prime("d1")).send(dup).end(observe.Complete)
	tl.call("s2", 5, "tools/list").stream200().send(prime("e1"))
	tl.wait(2 * time.Minute)
	want := tl.final()
	if want.Verdict != report.VerdictFail || len(log) < 30 {
		t.Fatalf("the story gave verdict %s from %d observations; want a failing run of 30 or more to compare", want.Verdict, len(log))
	}
	for _, n := range []int{1, 2, 7, 32, len(log)} {
		v := New(opts)
		for i := 0; i < len(log); i += n {
			v.ObserveRun(log[i:min(i+n, len(log))])
		}
		if got := v.Final(tl.at); !reflect.DeepEqual(got, want) {
			t.Errorf("in runs of %d: the report differs from one observation at a time:\n got %+v\nwant %+v", n, got, want)
		}
	}
}
