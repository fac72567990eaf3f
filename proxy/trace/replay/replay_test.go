package replay

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// conv builds a recorded conversation: an initialize answered on a stream
// (JSON-RPC id 0), then a tools/call (id 1) whose stream lost its second
// and third events to a fault and was closed, resumed from the first.
func conv() []*observe.Observation {
	ms := time.Millisecond
	sess := "s-1"
	var obs []*observe.Observation
	add := func(o observe.Observation) { obs = append(obs, &o) }
	ev := func(ex uint64, st mcp.StreamType, at time.Duration, idx int, id, data string, fate observe.Fate, kind mcp.RPCKind, rpcID string, copies int) {
		raw := "id: " + id + "\ndata: " + data + "\n\n"
		e := &observe.Event{Event: mcp.Event{Index: idx, Raw: []byte(raw), Parsed: true, ID: []byte(id), HasID: true, Dispatched: true, RPCKind: kind, RPCID: []byte(rpcID)}, Fate: fate, Copies: copies}
		if fate == observe.Delivered {
			e.DeliveredAt = at
		}
		add(observe.Observation{Kind: observe.KindEvent, At: at, Exchange: ex, Stream: st, Session: sess, Event: e})
	}
	sseHead := http.Header{"Content-Type": {"text/event-stream"}, "Mcp-Session-Id": {sess}}
	add(observe.Observation{Kind: observe.KindRequest, At: 0, Exchange: 1, Stream: mcp.StreamPost,
		Request: &observe.Request{Method: "POST", Messages: []observe.Message{{Kind: mcp.RPCRequest, Method: "initialize", ID: "0"}}}})
	add(observe.Observation{Kind: observe.KindResponse, At: 10 * ms, Exchange: 1, Stream: mcp.StreamPost, Session: sess,
		Response: &observe.Response{Status: 200, Header: sseHead, EventStream: true, Session: sess}})
	ev(1, mcp.StreamPost, 11*ms, 0, "a0", `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25"}}`, observe.Delivered, mcp.RPCResponse, "0", 1)
	add(observe.Observation{Kind: observe.KindEnd, At: 12 * ms, Exchange: 1, Stream: mcp.StreamPost, Session: sess, End: &observe.End{}})

	add(observe.Observation{Kind: observe.KindRequest, At: 100 * ms, Exchange: 2, Stream: mcp.StreamPost, Session: sess,
		Request: &observe.Request{Method: "POST", Messages: []observe.Message{{Kind: mcp.RPCRequest, Method: "tools/call", ID: "1"}}}})
	add(observe.Observation{Kind: observe.KindResponse, At: 110 * ms, Exchange: 2, Stream: mcp.StreamPost, Session: sess,
		Response: &observe.Response{Status: 200, Header: sseHead, EventStream: true, Session: sess}})
	ev(2, mcp.StreamPost, 120*ms, 0, "b0", `{"jsonrpc":"2.0","method":"notifications/progress"}`, observe.Delivered, mcp.RPCNotification, "", 2)
	ev(2, mcp.StreamPost, 130*ms, 1, "b1", `{"jsonrpc":"2.0","method":"notifications/progress"}`, observe.Lost, mcp.RPCNotification, "", 0)
	ev(2, mcp.StreamPost, 140*ms, 2, "b2", `{"jsonrpc":"2.0","id":1,"result":{}}`, observe.Lost, mcp.RPCResponse, "1", 0)
	add(observe.Observation{Kind: observe.KindEnd, At: 141 * ms, Exchange: 2, Stream: mcp.StreamPost, Session: sess, End: &observe.End{Cause: observe.FaultClosed}})

	add(observe.Observation{Kind: observe.KindRequest, At: 300 * ms, Exchange: 3, Stream: mcp.StreamResume, Session: sess,
		Request: &observe.Request{Method: "GET", LastEventID: "b0", HasLastEventID: true}})
	add(observe.Observation{Kind: observe.KindResponse, At: 301 * ms, Exchange: 3, Stream: mcp.StreamResume, Session: sess,
		Response: &observe.Response{Status: 200, Header: sseHead, EventStream: true, Session: sess}})
	ev(3, mcp.StreamResume, 302*ms, 0, "b1", `{"jsonrpc":"2.0","method":"notifications/progress"}`, observe.Delivered, mcp.RPCNotification, "", 1)
	ev(3, mcp.StreamResume, 303*ms, 1, "b2", `{"jsonrpc":"2.0","id":1,"result":{}}`, observe.Delivered, mcp.RPCResponse, "1", 1)
	add(observe.Observation{Kind: observe.KindEnd, At: 304 * ms, Exchange: 3, Stream: mcp.StreamResume, Session: sess, End: &observe.End{}})
	return obs
}

// fakeClock advances by what it is asked to sleep, and keeps the asks.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	slept []time.Duration
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d > 0 {
		c.slept = append(c.slept, d)
		c.now = c.now.Add(d)
	}
	return ctx.Err() == nil
}

func serve(t *testing.T, opts Options) (*Server, *httptest.Server) {
	t.Helper()
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(func() { s.Close(); hs.Close() })
	return s, hs
}

func do(t *testing.T, hs *httptest.Server, method, body string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, hs.URL+"/mcp", strings.NewReader(body))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestRecordedMode(t *testing.T) {
	clk := &fakeClock{now: time.Unix(0, 0)}
	_, hs := serve(t, Options{Observations: conv(), Speed: 2, Clock: clk})
	resp, body := do(t, hs, "POST", `{"jsonrpc":"2.0","id":7,"method":"initialize"}`, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Mcp-Session-Id") != "s-1" || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("initialize: %d %v", resp.StatusCode, resp.Header)
	}
	// The client's id 7 replaces the recorded 0 in the response.
	if !strings.Contains(body, `"id":7`) || strings.Contains(body, `"id":0`) || !strings.HasPrefix(body, "id: a0\n") {
		t.Errorf("initialize stream %q: want the recorded event with the client's id 7", body)
	}
	// Timing at speed 2: response 10ms after the request, the event 1ms
	// later, the end 1ms after that; each halved.
	if want := []time.Duration{5 * time.Millisecond, 500 * time.Microsecond, 500 * time.Microsecond}; !slices.Equal(clk.slept, want) {
		t.Errorf("waits %v, want %v", clk.slept, want)
	}
	_, body = do(t, hs, "POST", `{"jsonrpc":"2.0","id":8,"method":"tools/call"}`, map[string]string{"Mcp-Session-Id": "s-1"})
	// What the client got: b0 twice (duplicated), b1 and b2 lost.
	if want := "id: b0\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n"; body != want+want {
		t.Errorf("tools/call stream %q, want b0 twice and nothing else", body)
	}
	_, body = do(t, hs, "GET", "", map[string]string{"Mcp-Session-Id": "s-1", "Last-Event-ID": "b0"})
	if !strings.Contains(body, "id: b1\n") || !strings.Contains(body, "id: b2\n") || !strings.Contains(body, `"id":8`) {
		t.Errorf("resumed stream %q: want b1 and b2 with the client's id 8", body)
	}
}

func TestServerMode(t *testing.T) {
	s, hs := serve(t, Options{Observations: conv(), Mode: ModeServer, NoWait: true})
	do(t, hs, "POST", `{"jsonrpc":"2.0","id":0,"method":"initialize"}`, nil)
	_, body := do(t, hs, "POST", `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, map[string]string{"Mcp-Session-Id": "s-1"})
	// What the server sent: every event once, the lost ones included.
	for _, id := range []string{"b0", "b1", "b2"} {
		if strings.Count(body, "id: "+id+"\n") != 1 {
			t.Errorf("stream %q: want %s exactly once", body, id)
		}
	}
	// A resume then gets nothing it already has.
	_, body = do(t, hs, "GET", "", map[string]string{"Mcp-Session-Id": "s-1", "Last-Event-ID": "b2"})
	if body != "" {
		t.Errorf("resume after everything was sent replays %q", body)
	}
	if st := s.Stats(); st.Matched != 3 || st.Unmatched != 0 || len(st.Resumes) != 1 || st.Resumes[0] != "b2" {
		t.Errorf("stats %+v", st)
	}
}

func TestUnmatched(t *testing.T) {
	s, hs := serve(t, Options{Observations: conv(), NoWait: true})
	for _, tc := range []struct {
		method, body string
		hdr          map[string]string
		want         int
	}{
		{"POST", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil, 500},
		{"POST", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Mcp-Session-Id": "s-1"}, 202},
		{"GET", "", map[string]string{"Mcp-Session-Id": "s-1"}, 405},
		// Recorded in session s-1: another session does not match it.
		{"POST", `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, map[string]string{"Mcp-Session-Id": "other"}, 500},
	} {
		if resp, body := do(t, hs, tc.method, tc.body, tc.hdr); resp.StatusCode != tc.want {
			t.Errorf("%s %s: %d %q, want %d", tc.method, tc.body, resp.StatusCode, body, tc.want)
		}
	}
	if st := s.Stats(); st.Unmatched != 4 || st.Matched != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestMatchOrder: recorded exchanges that look alike are used in order,
// and a resume prefers the one with its Last-Event-ID.
func TestMatchOrder(t *testing.T) {
	mk := func(seq uint64, st mcp.StreamType, lei string) *recExchange {
		return &recExchange{seq: seq, method: "GET", stream: st, session: "s", lei: lei, hasLEI: lei != ""}
	}
	sc := &script{exchanges: []*recExchange{mk(1, mcp.StreamResume, "x"), mk(2, mcp.StreamResume, "y"), mk(3, mcp.StreamGet, "")}}
	used := map[uint64]bool{}
	for i, tc := range []struct {
		live *liveRequest
		want uint64
	}{
		{&liveRequest{method: "GET", stream: mcp.StreamResume, session: "s", lei: "y", hasLEI: true}, 2},
		{&liveRequest{method: "GET", stream: mcp.StreamResume, session: "s", lei: "z", hasLEI: true}, 1},
		{&liveRequest{method: "GET", stream: mcp.StreamResume, session: "s", lei: "x", hasLEI: true}, 0},
		{&liveRequest{method: "GET", stream: mcp.StreamGet, session: "s"}, 3},
	} {
		got := sc.match(tc.live, used)
		if (got == nil && tc.want != 0) || (got != nil && got.seq != tc.want) {
			t.Errorf("request %d matched %+v, want exchange %d", i, got, tc.want)
		}
	}
}

func TestResetAndStall(t *testing.T) {
	ms := time.Millisecond
	head := http.Header{"Content-Type": {"text/event-stream"}}
	mk := func(fate observe.Fate, cause observe.Cause) []*observe.Observation {
		return []*observe.Observation{
			{Kind: observe.KindRequest, Exchange: 1, Stream: mcp.StreamGet, Request: &observe.Request{Method: "GET"}},
			{Kind: observe.KindResponse, At: ms, Exchange: 1, Stream: mcp.StreamGet, Response: &observe.Response{Status: 200, Header: head, EventStream: true}},
			{Kind: observe.KindEvent, At: 2 * ms, Exchange: 1, Stream: mcp.StreamGet, Event: &observe.Event{Event: mcp.Event{Raw: []byte("data: x\n\n"), Parsed: true}, Fate: fate, Copies: 1}},
			{Kind: observe.KindEnd, At: 3 * ms, Exchange: 1, Stream: mcp.StreamGet, End: &observe.End{Cause: cause}},
		}
	}
	obs := mk(observe.Delivered, observe.FaultReset)
	_, hs := serve(t, Options{Observations: obs, NoWait: true})
	resp, err := hs.Client().Get(hs.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil || string(b) != "data: x\n\n" {
		t.Errorf("reset stream: read %q, err %v; want the event, then an abrupt end", b, err)
	}

	s, hs2 := serve(t, Options{Observations: mk(observe.Stalled, observe.ClientGone), NoWait: true})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", hs2.URL, nil)
	resp, err = hs2.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan []byte)
	go func() { b, _ := io.ReadAll(resp.Body); done <- b }()
	s.Close() // releases the stall, which otherwise lasts until the client leaves
	select {
	case b := <-done:
		if len(b) != 0 {
			t.Errorf("stalled stream delivered %q", b)
		}
	case <-ctx.Done():
		t.Fatal("Close did not release a stalled stream")
	}
	resp.Body.Close()
}

// TestEndsWithSession: a stream the recording ended once its session was
// deleted is ended by the session's deletion in the replay, not by the
// clock; one that ended before is not.
func TestEndsWithSession(t *testing.T) {
	ms := time.Millisecond
	ex := func(seq uint64, method string, st mcp.StreamType, reqAt, endAt time.Duration) []*observe.Observation {
		return []*observe.Observation{
			{Kind: observe.KindRequest, At: reqAt, Exchange: seq, Stream: st, Session: "s", Request: &observe.Request{Method: method}},
			{Kind: observe.KindEnd, At: endAt, Exchange: seq, Stream: st, Session: "s", End: &observe.End{}},
		}
	}
	var obs []*observe.Observation
	obs = append(obs, ex(1, "GET", mcp.StreamGet, 0, 100*ms)...)  // ends with the DELETE
	obs = append(obs, ex(2, "POST", mcp.StreamPost, 0, 50*ms)...) // ends before it
	obs = append(obs, ex(3, "DELETE", mcp.StreamOther, 90*ms, 95*ms)...)
	sc := newScript(obs)
	for i, want := range []bool{true, false, false} {
		if got := sc.exchanges[i].withSession; got != want {
			t.Errorf("exchange %d: ends with the session = %v, want %v", i+1, got, want)
		}
	}
}

func TestStatusOutOfRangeRefused(t *testing.T) {
	for _, st := range []int{0, 99, 600, 1000} {
		obs := conv()
		for _, o := range obs {
			if o.Kind == observe.KindResponse {
				r := *o.Response
				r.Status = st
				o.Response = &r
				break
			}
		}
		_, err := New(Options{Observations: obs})
		if err == nil || !strings.Contains(err.Error(), "outside 100-599") {
			t.Errorf("status %d: err = %v, want a refusal naming 100-599", st, err)
		}
	}
	if _, err := New(Options{Observations: conv()}); err != nil {
		t.Errorf("recorded statuses refused: %v", err)
	}
}
