package forward_test

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/mcp"
)

// scriptPlan is a faults.Plan that returns fixed actions: the pump's side
// of the boundary is tested apart from the fault kinds that decide.
type scriptPlan struct {
	exchange func(*mcp.Exchange) faults.ExchangeAction
	start    faults.StreamAction
	event    func(*mcp.Event) faults.EventAction
}

func (s *scriptPlan) Exchange(ex *mcp.Exchange) faults.ExchangeAction {
	if s.exchange == nil {
		return faults.ExchangeAction{}
	}
	return s.exchange(ex)
}
func (s *scriptPlan) Stream(*mcp.Exchange) faults.StreamPlan { return s }
func (s *scriptPlan) Start() faults.StreamAction             { return s.start }
func (s *scriptPlan) Event(ev *mcp.Event) faults.EventAction {
	if s.event == nil {
		return faults.EventAction{}
	}
	return s.event(ev)
}

// fakeClock runs timers at once and records the durations asked for, so
// that delays and stalls are checked without waiting.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	waited []time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	c.waited = append(c.waited, d)
	c.now = c.now.Add(d)
	c.mu.Unlock()
	go f()
	return func() bool { return false }
}

func (c *fakeClock) waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.waited...)
}

// The events of the stream most tests send: a priming event with a retry,
// a progress notification and the response to request 7.
const (
	primingEvent  = "id: p\nretry: 100\ndata:\n\n"
	progressEvent = "id: 1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n"
	responseEvent = "id: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\n"
	threeEvents   = primingEvent + progressEvent + responseEvent
)

// always decides act for every event.
func always(act faults.EventAction) func(*mcp.Event) faults.EventAction {
	return func(*mcp.Event) faults.EventAction { return act }
}

// onEvent builds an event decider that acts only on the event at index.
func onEvent(index int, act faults.EventAction) func(*mcp.Event) faults.EventAction {
	return func(ev *mcp.Event) faults.EventAction {
		if ev.Index == index {
			return act
		}
		return faults.EventAction{}
	}
}

// TestPumpCarriesOutEventActions: each decision's effect on the bytes the
// client receives.
func TestPumpCarriesOutEventActions(t *testing.T) {
	checkNoLeaks(t)
	ev0, ev1, ev2 := primingEvent, progressEvent, responseEvent
	for _, tc := range []struct {
		name string
		plan scriptPlan
		want string
	}{
		{"none", scriptPlan{}, threeEvents},
		{"drop", scriptPlan{event: onEvent(1, faults.EventAction{Drop: true})}, ev0 + ev2},
		{"duplicate", scriptPlan{event: onEvent(2, faults.EventAction{Duplicate: 2})}, ev0 + ev1 + ev2 + ev2 + ev2},
		{"strip-retry", scriptPlan{event: onEvent(0, faults.EventAction{StripRetry: true})}, "id: p\ndata:\n\n" + ev1 + ev2},
		{"set-retry", scriptPlan{event: onEvent(0, faults.EventAction{SetRetry: 5, HasSetRetry: true})}, "id: p\nretry: 5\ndata:\n\n" + ev1 + ev2},
		{"strip-id", scriptPlan{event: onEvent(2, faults.EventAction{StripID: true})}, ev0 + ev1 + "data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\n"},
		{"rewrite-id", scriptPlan{event: onEvent(1, faults.EventAction{RewriteID: []byte("zzz")})}, ev0 + strings.Replace(ev1, "id: 1", "id: zzz", 1) + ev2},
		{"corrupt", scriptPlan{event: onEvent(2, faults.EventAction{Corrupt: true})}, ev0 + ev1 + "id: 2\ndata: {\"jsonrpc\":\"2.0\",\"}{\n\n"},
		{"noise", scriptPlan{event: onEvent(1, faults.EventAction{Noise: 2})}, ev0 + ": keepalive\n\n: keepalive\n\n" + ev1 + ev2},
		{"fragment", scriptPlan{event: onEvent(1, faults.EventAction{Fragment: 3})}, threeEvents},
		{"close-after", scriptPlan{event: onEvent(0, faults.EventAction{Close: faults.CloseAfter})}, ev0},
		{"close-before", scriptPlan{event: onEvent(1, faults.EventAction{Close: faults.CloseBefore})}, ev0},
		{"close-at-start", scriptPlan{start: faults.StreamAction{Close: faults.CloseBefore}}, ""},
		{"lose", scriptPlan{event: onEvent(1, faults.EventAction{Lose: 2})}, ev0},
		{"delay", scriptPlan{event: onEvent(1, faults.EventAction{Delay: 250 * time.Millisecond})}, threeEvents},
		{"throttle", scriptPlan{start: faults.StreamAction{Throttle: 100, ThrottleBurst: 10}}, threeEvents},
	} {
		t.Run(tc.name, func(t *testing.T) {
			upstreamGone := make(chan struct{})
			up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
				defer close(upstreamGone)
				sseHeader(w)
				writePieces(w, ev0, ev1, ev2)
			})
			clock := &fakeClock{now: time.Unix(0, 0)}
			plan := tc.plan
			fray, _ := front(t, up, func(o *proxyOptions) { o.Faults = &plan; o.Clock = clock })
			got, err := readBody(get(t, fray+"/mcp"))
			if err != nil {
				t.Fatalf("a fault's close must be clean, got %v", err)
			}
			if got != tc.want {
				t.Fatalf("client got\n%q\nwant\n%q", got, tc.want)
			}
			<-upstreamGone
			switch tc.name {
			case "delay":
				if w := clock.waits(); len(w) != 1 || w[0] != 250*time.Millisecond {
					t.Fatalf("waits %v, want one of 250ms", w)
				}
			case "throttle":
				wantThrottled(t, clock.waits())
			}
		})
	}
}

// wantThrottled fails the test unless waits add up to what 100 B/s with
// a 10-byte burst makes threeEvents wait: the bytes beyond the burst cost
// 10ms each, about len/100 seconds in all.
func wantThrottled(t *testing.T, waits []time.Duration) {
	t.Helper()
	var total time.Duration
	for _, w := range waits {
		total += w
	}
	want := time.Duration(len(threeEvents)-10) * 10 * time.Millisecond
	if total < want-50*time.Millisecond || total > want+50*time.Millisecond {
		t.Fatalf("throttle waited %v in all, want about %v", total, want)
	}
}

// TestFragmentWritesSmallPieces: with fragment, the client reads the event
// in pieces no larger than asked, each one flushed on its own.
func TestFragmentWritesSmallPieces(t *testing.T) {
	checkNoLeaks(t)
	up := sseServer(t, threeEvents)
	plan := scriptPlan{event: always(faults.EventAction{Fragment: 4})}
	fray, _ := front(t, up, func(o *proxyOptions) { o.Faults = &plan })
	conn := dialSend(t, strings.TrimPrefix(fray, "http://"), "GET /mcp HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(conn)
	if _, err := http.ReadResponse(br, nil); err != nil {
		t.Fatal(err)
	}
	// Each flushed piece is one HTTP/1.1 chunk.
	sizes, _, err := readChunks(br)
	if err != nil {
		t.Fatal(err)
	}
	wantFragments(t, sizes)
}

// wantFragments fails the test unless sizes, those of the chunks that
// carried threeEvents, are of at most 4 bytes each.
func wantFragments(t *testing.T, sizes []int) {
	t.Helper()
	for _, n := range sizes {
		if n > 4 {
			t.Fatalf("chunk sizes %v: one above 4", sizes)
		}
	}
	if len(sizes) < len(threeEvents)/4 {
		t.Fatalf("%d chunks for %d bytes", len(sizes), len(threeEvents))
	}
}

// TestResetAbortsWithRST: the client's connection is reset, not closed.
func TestResetAbortsWithRST(t *testing.T) {
	checkNoLeaks(t)
	up := sseServer(t, threeEvents)
	plan := scriptPlan{event: onEvent(1, faults.EventAction{Close: faults.CloseReset})}
	fray, _ := front(t, up, func(o *proxyOptions) { o.Faults = &plan })
	conn := dialSend(t, strings.TrimPrefix(fray, "http://"), "GET /mcp HTTP/1.1\r\nHost: x\r\n\r\n")
	_, err := io.ReadAll(conn)
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("read ended with %v, want a connection reset", err)
	}
}

// TestExchangeActions: answers fray gives instead of forwarding, and the
// header changes on the forwarded request.
func TestExchangeActions(t *testing.T) {
	checkNoLeaks(t)
	seen := make(chan http.Header, 1)
	up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header.Clone()
		w.Header().Set("X-Secret", "s")
		w.WriteHeader(http.StatusOK)
	})
	for _, tc := range []struct {
		name   string
		act    faults.ExchangeAction
		status int
		check  func(t *testing.T, resp *http.Response, up http.Header)
	}{
		{"status", faults.ExchangeAction{Status: 503, Header: http.Header{"Retry-After": {"2"}}, Body: []byte("busy")}, 503,
			func(t *testing.T, resp *http.Response, up http.Header) {
				if up != nil || resp.Header.Get("Retry-After") != "2" {
					t.Fatalf("forwarded: %v; Retry-After %q", up != nil, resp.Header.Get("Retry-After"))
				}
			}},
		{"drop-request", faults.ExchangeAction{DropRequest: true}, 202,
			func(t *testing.T, resp *http.Response, up http.Header) {
				if up != nil {
					t.Fatal("a dropped request was forwarded")
				}
			}},
		{"strip-last-event-id", faults.ExchangeAction{StripLastEventID: true}, 200,
			func(t *testing.T, resp *http.Response, up http.Header) {
				if _, ok := up["Last-Event-Id"]; ok {
					t.Fatalf("Last-Event-ID forwarded: %v", up)
				}
			}},
		{"rewrite-last-event-id", faults.ExchangeAction{SetLastEventID: "other", HasLastEventID: true}, 200,
			func(t *testing.T, resp *http.Response, up http.Header) {
				if up.Get("Last-Event-Id") != "other" {
					t.Fatalf("Last-Event-ID %q", up.Get("Last-Event-Id"))
				}
			}},
		{"strip-header", faults.ExchangeAction{StripRequestHeaders: []string{"Mcp-Session-Id"}, StripResponseHeaders: []string{"X-Secret"}}, 200,
			func(t *testing.T, resp *http.Response, up http.Header) {
				if up.Get("Mcp-Session-Id") != "" || resp.Header.Get("X-Secret") != "" {
					t.Fatalf("headers not stripped: up %v, resp %v", up, resp.Header)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			act := tc.act
			plan := scriptPlan{exchange: func(*mcp.Exchange) faults.ExchangeAction { return act }}
			fray, _ := front(t, up, func(o *proxyOptions) { o.Faults = &plan })
			resp, _ := roundTrip(t, "GET", fray+"/mcp", "", map[string]string{"Last-Event-ID": "e1", "Mcp-Session-Id": "s"})
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
			var upHeader http.Header
			select {
			case upHeader = <-seen:
			default:
			}
			tc.check(t, resp, upHeader)
		})
	}
}
