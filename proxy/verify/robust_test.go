package verify

import (
	"fmt"
	"math/rand/v2"
	"net/http"
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
