package timeline

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
)

// gen builds a plausible trace of about n events: sessions that
// initialize, keep a standalone GET stream open, and make tools/call
// requests whose streams every third time lose three events to a fault
// and are resumed with Last-Event-ID, the response coming on the
// resumption; some events are duplicated. Every stream begins with a
// priming event that carries retry 250 ms, which the resumptions do not
// wait for.
type gen struct {
	rng  *rand.Rand
	obs  []*observe.Observation
	at   time.Duration
	ex   uint64
	n    int // events so far
	lost []lostStream
}

type lostStream struct {
	session, exchange int
	lastID            string
	lost              []string
}

func (g *gen) tick() time.Duration {
	g.at += time.Duration(50+g.rng.IntN(400)) * time.Microsecond
	return g.at
}

func (g *gen) add(o *observe.Observation) { g.obs = append(g.obs, o) }

func (g *gen) head(k observe.Kind, ex uint64, st mcp.StreamType, s int) observe.Observation {
	return observe.Observation{Kind: k, At: g.tick(), Exchange: ex, Stream: st, Session: fmt.Sprintf("sess-%d", s), SessionSeq: s, Protocol: "2025-11-25"}
}

func (g *gen) event(ex uint64, st mcp.StreamType, s, idx int, id string, fate observe.Fate, fired []faults.Firing, copies int) {
	o := g.head(observe.KindEvent, ex, st, s)
	data := fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":%d}}`, idx)
	raw := []byte(fmt.Sprintf("id: %s\ndata: %s\n\n", id, data))
	e := &observe.Event{Event: mcp.Event{Index: idx, Raw: raw, Parsed: true, ID: []byte(id), HasID: true, Dispatched: true, RPCKind: mcp.RPCNotification, RPCMethod: []byte("notifications/progress")}, Fate: fate}
	if idx == 0 {
		e.Raw, e.Dispatched, e.Priming, e.RPCKind, e.RPCMethod = []byte("id: "+id+"\nretry: 250\ndata:\n\n"), false, true, mcp.RPCNone, nil
		e.Retry, e.HasRetry = 250, true
	}
	if fate == observe.Delivered {
		e.DeliveredAt, e.DeliveredID, e.DeliveredHasID, e.Copies = o.At, e.ID, true, copies
		e.DeliveredRetry, e.DeliveredHasRetry = e.Retry, e.HasRetry
	}
	o.Event, o.Fired = e, fired
	g.add(&o)
	g.n++
}

// response is the last event of a tools/call stream: the result of
// request ex.
func (g *gen) response(ex uint64, st mcp.StreamType, s, idx int, id string) {
	g.event(ex, st, s, idx, id, observe.Delivered, nil, 1)
	e := g.obs[len(g.obs)-1].Event
	e.Raw = []byte(fmt.Sprintf("id: %s\ndata: {\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{}}\n\n", id, ex))
	e.RPCKind, e.RPCMethod, e.RPCID = mcp.RPCResponse, nil, []byte(fmt.Sprint(ex))
}

func (g *gen) request(st mcp.StreamType, s int, method string, lei *string) uint64 {
	g.ex++
	o := g.head(observe.KindRequest, g.ex, st, s)
	r := &observe.Request{Method: "POST", Path: "/mcp", Header: http.Header{"Accept": {"application/json, text/event-stream"}}}
	if st != mcp.StreamPost {
		r.Method = "GET"
	} else {
		r.Messages = []observe.Message{{Kind: mcp.RPCRequest, Method: method, ID: fmt.Sprint(g.ex)}}
	}
	if lei != nil {
		r.LastEventID, r.HasLastEventID = *lei, true
	}
	o.Request = r
	g.add(&o)
	resp := g.head(observe.KindResponse, g.ex, st, s)
	resp.Response = &observe.Response{Status: 200, EventStream: method != "initialize", Session: resp.Session}
	g.add(&resp)
	return g.ex
}

func (g *gen) end(ex uint64, st mcp.StreamType, s int, c observe.Cause, msgs ...observe.Message) {
	o := g.head(observe.KindEnd, ex, st, s)
	o.End = &observe.End{Cause: c, Messages: msgs}
	g.add(&o)
}

// generate returns about n events' worth of observations and when the run
// ended.
func generate(n int, seed uint64) ([]*observe.Observation, time.Duration, []lostStream) {
	g := &gen{rng: rand.New(rand.NewPCG(seed, 1))}
	sessions := max(1, n/500)
	for s := 1; g.n < n; s = s%sessions + 1 {
		if g.ex < uint64(sessions)*2 {
			ex := g.request(mcp.StreamPost, s, "initialize", nil)
			g.end(ex, mcp.StreamPost, s, observe.Complete, observe.Message{Kind: mcp.RPCResponse, ID: fmt.Sprint(ex)})
			get := g.request(mcp.StreamGet, s, "", nil)
			for i := range 3 {
				g.event(get, mcp.StreamGet, s, i, fmt.Sprintf("%d_GET_%d", s, i), observe.Delivered, nil, 1)
			}
			g.end(get, mcp.StreamGet, s, observe.ClientGone)
			continue
		}
		ex := g.request(mcp.StreamPost, s, "tools/call", nil)
		events := 4 + g.rng.IntN(20)
		lose := g.rng.IntN(3) == 0
		id := func(i int) string { return fmt.Sprintf("%d_%d_%d", s, ex, i) }
		ls := lostStream{session: s, exchange: int(ex)}
		for i := range events {
			switch {
			case lose && i == 2:
				g.event(ex, mcp.StreamPost, s, i, id(i), observe.Lost, []faults.Firing{{Index: 0, Kind: "lose"}}, 0)
				ls.lost = append(ls.lost, id(i))
			case lose && i > 2 && i < 5:
				g.event(ex, mcp.StreamPost, s, i, id(i), observe.Lost, nil, 0)
				ls.lost = append(ls.lost, id(i))
			case lose && i >= 5:
			case i%7 == 6:
				g.event(ex, mcp.StreamPost, s, i, id(i), observe.Delivered, []faults.Firing{{Index: 1, Kind: "duplicate"}}, 2)
			default:
				g.event(ex, mcp.StreamPost, s, i, id(i), observe.Delivered, nil, 1)
				ls.lastID = id(i)
			}
		}
		if !lose {
			g.response(ex, mcp.StreamPost, s, events, id(events))
			g.end(ex, mcp.StreamPost, s, observe.Complete)
			continue
		}
		g.end(ex, mcp.StreamPost, s, observe.FaultClosed)
		g.lost = append(g.lost, ls)
		lei := ls.lastID
		re := g.request(mcp.StreamResume, s, "", &lei)
		for i, lid := range ls.lost {
			g.event(re, mcp.StreamResume, s, i, lid, observe.Delivered, nil, 1)
		}
		g.response(re, mcp.StreamResume, s, len(ls.lost), id(events))
		g.obs[len(g.obs)-1].Event.RPCID = []byte(fmt.Sprint(ex))
		g.end(re, mcp.StreamResume, s, observe.Complete)
	}
	return g.obs, g.at + time.Millisecond, g.lost
}

// sampleReport is a failing verdict about the first lost stream.
func sampleReport(lost []lostStream) *report.Report {
	l := lost[0]
	return &report.Report{Schema: report.SchemaVersion, Verdict: report.VerdictFail, Checks: []report.Check{
		{ID: "client.last-event-id", Severity: "error", Status: report.StatusPass, Applied: len(lost)},
		{ID: "server.replay-complete", Severity: "error", Status: report.StatusFail, Count: 12, Applied: len(lost),
			Summary: "a resumed stream replays every event the client missed",
			Evidence: []report.Evidence{{Message: "the replay after " + l.lastID + " left out " + l.lost[1],
				Session: l.session, Exchange: uint64(l.exchange), Related: []uint64{uint64(l.exchange) + 1},
				EventIDs: []string{l.lost[1]}, AtMS: 40, Fault: &report.FaultRef{Index: 0, Kind: "lose"}}}},
		{ID: "server.priming-event", Severity: "warning", Status: report.StatusWarn, Count: 1, Applied: 3,
			Evidence: []report.Evidence{{Message: "the stream answering POST tools/call (id 2) began with an event that had data", Session: 1, Exchange: 2}}},
	}}
}
