package verify

import (
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
)

// ledgerSize counts the entries the ledger holds: what must stay flat on
// a long run.
func (v *Verifier) ledgerSize() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	n := len(v.sessions) + len(v.meta.m) + len(v.exch) + len(v.reinit) + len(v.legacy) + len(v.dead)
	for _, s := range v.sessions {
		n += s.ids.up.len() + s.ids.down.len() + len(s.pending) + len(s.answered.m) + len(s.logicals)
		for _, l := range s.logicals {
			n += len(l.events) + len(l.kept)
		}
	}
	return n
}

// soak drives a Verifier with a simulated run at 200 events/s: a client
// that keeps a standalone GET stream (50 events/s) and calls a tool 30
// times a second (answer streams of 5 events); one answer stream in ten
// loses its last three events and is resumed 300 ms later with a full
// replay; every 30 s the client deletes its session and starts another.
// No sockets and no clock: At is all the time there is.
type soak struct {
	v        *Verifier
	at       time.Duration
	ex       uint64
	sess     string
	seq      int
	rpc      int
	evid     int
	get      uint64
	getIndex int
	obs      observe.Observation
	ev       observe.Event
	req      observe.Request
	resp     observe.Response
	end      observe.End
	raw      []byte
	count    int // observations made
}

func newSoak(v *Verifier) *soak {
	s := &soak{v: v}
	s.req.Header = http.Header{}
	return s
}

func (s *soak) observe(k observe.Kind, ex uint64, st mcp.StreamType) {
	s.obs = observe.Observation{Kind: k, At: s.at, Exchange: ex, Stream: st, Session: s.sess, SessionSeq: s.seq, Protocol: "2025-11-25"}
	switch k {
	case observe.KindRequest:
		s.obs.Request = &s.req
	case observe.KindResponse:
		s.obs.Response = &s.resp
	case observe.KindEvent:
		s.obs.Event = &s.ev
	case observe.KindEnd:
		s.obs.End = &s.end
	}
	s.v.Observe(&s.obs)
	s.count++
}

func (s *soak) request(method string, st mcp.StreamType, leid string, msgs ...observe.Message) uint64 {
	s.ex++
	s.req = observe.Request{Method: method, Path: "/mcp", Header: s.req.Header, Messages: msgs,
		HasLastEventID: leid != "", LastEventID: leid}
	s.req.Header.Set("Mcp-Session-Id", s.sess)
	s.observe(observe.KindRequest, s.ex, st)
	return s.ex
}

func (s *soak) respond(ex uint64, st mcp.StreamType, status int, stream bool, issue string) {
	s.resp = observe.Response{Status: status, EventStream: stream, Session: issue}
	s.observe(observe.KindResponse, ex, st)
}

func (s *soak) finish(ex uint64, st mcp.StreamType, c observe.Cause, msgs ...observe.Message) {
	s.end = observe.End{Cause: c, Messages: msgs}
	s.observe(observe.KindEnd, ex, st)
}

// event sends one event; rpcID > 0 makes it the response to that request,
// rpcID 0 a notification, rpcID < 0 a priming event.
func (s *soak) event(ex uint64, st mcp.StreamType, index int, id string, rpcID int, fate observe.Fate) {
	var data string
	kind := mcp.RPCNotification
	switch {
	case rpcID > 0:
		data, kind = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`, rpcID), mcp.RPCResponse
	case rpcID == 0:
		data = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`
	default:
		kind = mcp.RPCNone
	}
	s.raw = fmt.Appendf(s.raw[:0], "id: %s\ndata: %s\n\n", id, data)
	s.ev = observe.Event{Event: mcp.Event{Index: index, Raw: s.raw, Parsed: true, ID: []byte(id), HasID: true, Priming: data == "", Dispatched: data != "", RPCKind: kind, RPCID: []byte(fmt.Sprint(rpcID))}, Fate: fate}
	if fate == observe.Delivered {
		s.ev.Copies, s.ev.DeliveredAt, s.ev.DeliveredID, s.ev.DeliveredHasID = 1, s.at, s.ev.ID, true
	}
	s.observe(observe.KindEvent, ex, st)
}

func (s *soak) nextID() string {
	s.evid++
	return fmt.Sprintf("%s-%d", s.sess, s.evid)
}

// newSession deletes the current session (if any) and starts another,
// with its standalone GET stream.
func (s *soak) newSession() {
	if s.sess != "" {
		s.finish(s.get, mcp.StreamGet, observe.ClientGone)
		d := s.request("DELETE", mcp.StreamOther, "")
		s.respond(d, mcp.StreamOther, 200, false, "")
		s.finish(d, mcp.StreamOther, observe.Complete)
	}
	s.seq++
	s.sess = ""
	init := s.request("POST", mcp.StreamPost, "", observe.Message{Kind: mcp.RPCRequest, Method: "initialize", ID: "0"})
	s.sess = fmt.Sprintf("session-%d", s.seq)
	s.respond(init, mcp.StreamPost, 200, false, s.sess)
	s.finish(init, mcp.StreamPost, observe.Complete, observe.Message{Kind: mcp.RPCResponse, ID: "0"})
	s.get = s.request("GET", mcp.StreamGet, "")
	s.respond(s.get, mcp.StreamGet, 200, true, "")
	s.getIndex = 0
}

// second simulates one second of traffic.
func (s *soak) second() {
	start := s.at
	for i := range 30 {
		s.at = start + time.Duration(i)*30*time.Millisecond
		s.rpc++
		id := s.rpc
		post := s.request("POST", mcp.StreamPost, "", observe.Message{Kind: mcp.RPCRequest, Method: "tools/call", ID: fmt.Sprint(id)})
		s.respond(post, mcp.StreamPost, 200, true, "")
		ids := [5]string{s.nextID(), s.nextID(), s.nextID(), s.nextID(), s.nextID()}
		cut := s.rpc%10 == 0
		for j, eid := range ids {
			rpcID := 0
			switch j {
			case 0:
				rpcID = -1
			case 4:
				rpcID = id
			}
			fate := observe.Delivered
			if cut && j >= 2 {
				fate = observe.Lost
			}
			s.event(post, mcp.StreamPost, j, eid, rpcID, fate)
		}
		if !cut {
			s.finish(post, mcp.StreamPost, observe.Complete)
			continue
		}
		s.finish(post, mcp.StreamPost, observe.FaultClosed)
		s.at += 10 * time.Millisecond
		res := s.request("GET", mcp.StreamResume, ids[1])
		s.respond(res, mcp.StreamResume, 200, true, "")
		for j, eid := range ids[2:] {
			rpcID := 0
			if j == 2 {
				rpcID = id
			}
			s.event(res, mcp.StreamResume, j, eid, rpcID, observe.Delivered)
		}
		s.finish(res, mcp.StreamResume, observe.Complete)
	}
	for i := range 50 {
		s.at = start + time.Duration(i)*20*time.Millisecond
		s.event(s.get, mcp.StreamGet, s.getIndex, s.nextID(), 0, observe.Delivered)
		s.getIndex++
	}
	s.at = start + time.Second
}

// run simulates secs seconds, with a new session every 30.
func (s *soak) run(secs int) {
	for range secs {
		if s.at%(30*time.Second) == 0 {
			s.newSession()
		}
		s.second()
	}
}

// TestLedgerStaysBounded: ten minutes at 200 events/s leave the ledger no
// larger than one minute did, and under a fixed bound; and the run, with
// its cuts and replays, passes.
func TestLedgerStaysBounded(t *testing.T) {
	v := New(Options{})
	s := newSoak(v)
	s.run(60)
	oneMinute := v.ledgerSize()
	s.run(540)
	tenMinutes := v.ledgerSize()
	events := v.Progress().Events
	if events < 600*200 {
		t.Fatalf("simulated %d events, want at least %d", events, 600*200)
	}
	// Two sessions overlap at most: ids, delivered ids, answered requests
	// and the standalone stream's events, each within its window, plus
	// the metadata of every session id seen (20).
	const bound = 2*(3*idWindow+answeredWindow+64) + 64
	t.Logf("ledger entries: %d after 1 minute, %d after 10 minutes (bound %d); %d events", oneMinute, tenMinutes, bound, events)
	if tenMinutes > bound || tenMinutes > oneMinute+oneMinute/10+32 {
		t.Errorf("ledger grew from %d entries after 1 minute to %d after 10 (bound %d)", oneMinute, tenMinutes, bound)
	}
	r := v.Final(s.at)
	if r.Verdict != report.VerdictPass {
		for _, c := range r.Checks {
			if c.Count > 0 {
				t.Errorf("%s: %d findings, first %+v", c.ID, c.Count, c.Evidence[0])
			}
		}
	}
	if c := check(t, r, checks.ServerReplayComplete); c.Applied != 600*3 {
		t.Errorf("replay-complete applied %d times, want %d", c.Applied, 600*3)
	}
	if c := check(t, r, checks.E2EEveryRequestAnswered); c.Applied != 600*30+20 {
		t.Errorf("every-request-answered applied %d times, want %d", c.Applied, 600*30+20)
	}
}

// BenchmarkObserveSoak measures one simulated second of the soak run
// (about 500 observations, 200 of them events), the cost per observation
// (the simulation's own formatting included) and the live heap after the
// run.
func BenchmarkObserveSoak(b *testing.B) {
	v := New(Options{})
	s := newSoak(v)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		s.run(1)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(s.count), "ns/observation")
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	b.ReportMetric(float64(m.HeapAlloc)/(1<<20), "heap-MiB")
	b.ReportMetric(float64(v.ledgerSize()), "entries")
	runtime.KeepAlive(v)
}

// TestPendingBoundNamed: requests past the ledger's bound of unanswered
// requests in a session are excused as a bound reached, and the summary
// names the bound.
func TestPendingBoundNamed(t *testing.T) {
	v := New(Options{})
	s := newSoak(v)
	s.sess, s.seq = "s-1", 1
	const over = 5
	msgs := make([]observe.Message, maxPending+over)
	for i := range msgs {
		msgs[i] = observe.Message{Kind: mcp.RPCRequest, Method: "tools/call", ID: fmt.Sprint(i + 1)}
	}
	ex := s.request(http.MethodPost, mcp.StreamPost, "", msgs...)
	s.respond(ex, mcp.StreamPost, http.StatusAccepted, false, "")
	s.finish(ex, mcp.StreamPost, observe.Complete)
	r := v.Final(s.at + time.Minute)
	if n := excused(t, r, checks.E2EEveryRequestAnswered, pendingFull); n != over {
		t.Errorf("excused %+v, want %d as %q", check(t, r, checks.E2EEveryRequestAnswered).Excused, over, pendingFull)
	}
	var out strings.Builder
	if err := report.WriteSummary(&out, r, report.SummaryOptions{}); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("not judged by e2e.every-request-answered: more unanswered requests in a session than the %d the ledger holds (%d)", maxPending, over)
	if !strings.Contains(out.String(), want) {
		t.Errorf("the summary does not say %q:\n%s", want, out.String())
	}
}

// TestBoundedIDs: an observation whose ids are all short passes as it
// is, with no allocation; one with a long id, of any kind, passes as a
// copy with every long id replaced by its key, the original untouched.
func TestBoundedIDs(t *testing.T) {
	long := strings.Repeat("x", observe.MaxIDKey+1)
	key := observe.IDKey(long)
	short := &observe.Observation{Kind: observe.KindEvent, Session: "s-1",
		Event: &observe.Event{Event: mcp.Event{ID: []byte("7"), RPCID: []byte("1")}}}
	if bounded(short) != short {
		t.Error("an observation of short ids was copied")
	}
	if n := testing.AllocsPerRun(100, func() { _ = bounded(short) }); n != 0 {
		t.Errorf("bounded allocates %v times for short ids", n)
	}
	msgs := []observe.Message{{ID: long, Method: long, ProgressToken: long, Name: long, TaskID: long, Protocol: long}}
	for _, tc := range []struct {
		name string
		o    observe.Observation
		got  func(o *observe.Observation) []string
	}{
		{"session and protocol", observe.Observation{Kind: observe.KindEnd, Session: long, Protocol: long, End: &observe.End{}},
			func(o *observe.Observation) []string { return []string{o.Session, o.Protocol} }},
		{"event", observe.Observation{Kind: observe.KindEvent, Event: &observe.Event{Event: mcp.Event{ID: []byte(long), RPCID: []byte(long), RPCMethod: []byte(long)}, DeliveredID: []byte(long)}},
			func(o *observe.Observation) []string {
				e := o.Event
				return []string{string(e.ID), string(e.RPCID), string(e.RPCMethod), string(e.DeliveredID)}
			}},
		{"request", observe.Observation{Kind: observe.KindRequest, Request: &observe.Request{
			Header: http.Header{mcp.HeaderSession: {long}}, LastEventID: long, Messages: msgs, Cancels: []string{long},
			Action: observe.RequestAction{ForwardedLastEventID: long}}},
			func(o *observe.Observation) []string {
				q := o.Request
				m := q.Messages[0]
				return []string{q.Header.Get(mcp.HeaderSession), q.LastEventID, q.Cancels[0], q.Action.ForwardedLastEventID,
					m.ID, m.Method, m.ProgressToken, m.Name, m.TaskID, m.Protocol}
			}},
		{"response", observe.Observation{Kind: observe.KindResponse, Response: &observe.Response{Session: long, Header: http.Header{mcp.HeaderSession: {long}}}},
			func(o *observe.Observation) []string {
				return []string{o.Response.Session, o.Response.Header.Get(mcp.HeaderSession)}
			}},
		{"end", observe.Observation{Kind: observe.KindEnd, End: &observe.End{Messages: msgs}},
			func(o *observe.Observation) []string {
				m := o.End.Messages[0]
				return []string{m.ID, m.Method, m.ProgressToken}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			b := bounded(&o)
			if b == &o {
				t.Fatal("an observation with a long id passed as it is")
			}
			for i, s := range tc.got(b) {
				if s != key {
					t.Errorf("id %d is %d bytes, want its key", i, len(s))
				}
			}
			for i, s := range tc.got(&o) {
				if s != long {
					t.Errorf("the original's id %d was changed", i)
				}
			}
		})
	}
}

// BenchmarkObserveEvent measures what the verifier costs the proxy's
// per-event path: one delivered progress notification with a new id on a
// session's standalone GET stream, the id windows full (steady state).
func BenchmarkObserveEvent(b *testing.B) {
	event := benchEvents()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		event()
	}
}

// BenchmarkObserveEventCold is BenchmarkObserveEvent for an event that
// finds the verifier out of the nearer caches, as each event of a stream
// that waits between events does (the paced regime of the proxy's
// BenchmarkStream): before each event it writes over coldSpan bytes. It
// reports the median time of the events alone (cold-p50-ns); ns/op
// includes the writing and means nothing here. For a steadier median,
// more events:
//
//	go test -run XXX -bench BenchmarkObserveEventCold -benchtime 2000x ./proxy/verify/
func BenchmarkObserveEventCold(b *testing.B) {
	event := benchEvents()
	flood := make([]byte, coldSpan)
	took := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		for j := range flood {
			flood[j] = byte(i + j)
		}
		start := time.Now()
		event()
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "cold-p50-ns")
}

// coldSpan is what BenchmarkObserveEventCold writes between two events:
// more than a core's second-level cache holds on a typical server (1 MiB),
// less than a last-level cache (tens of MiB): what a paced stream's
// verifier meets between two events of a busy proxy.
const coldSpan = 4 << 20

// benchEvents sets a verifier up with a session's standalone GET stream
// whose id windows are full, and returns a function that observes one
// more delivered progress notification on it, with a new id.
func benchEvents() (event func()) {
	v := New(Options{})
	s := newSoak(v)
	s.sess = "bench-session"
	s.seq = 1
	ex := s.request("GET", mcp.StreamGet, "")
	s.respond(ex, mcp.StreamGet, 200, true, "")
	var id, raw []byte
	method := []byte("notifications/progress")
	seq := 0
	event = func() {
		seq++
		id = strconv.AppendInt(append(id[:0], "ev-"...), int64(seq), 10)
		raw = append(append(append(raw[:0], "id: "...), id...), "\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n"...)
		s.at += time.Microsecond
		s.ev = observe.Event{Event: mcp.Event{Index: seq, Raw: raw, Parsed: true, ID: id, HasID: true, Dispatched: true,
			Data: raw[len(id)+11 : len(raw)-2], RPCKind: mcp.RPCNotification, RPCMethod: method},
			Fate: observe.Delivered, Copies: 1, DeliveredAt: s.at, DeliveredID: id, DeliveredHasID: true}
		s.observe(observe.KindEvent, ex, mcp.StreamGet)
	}
	for range 2 * idWindow {
		event()
	}
	return event
}
