package forward_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/frayproxy/fray/faults"
)

// e2eCall is the request of every end-to-end case but the GETs.
const e2eCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow-count"}}`

// e2eDecoy is fault 0 of every profile here: an event fault that matches
// no event, so the fault under test is fault 1 and the log must say so.
const e2eDecoy = "[[fault]]\nkind = \"drop\"\nrpc_method = \"never/*\"\n\n"

// e2eCase is one fault kind's end-to-end check. The fault table is fault 1
// of the profile; the request is a POST of e2eCall unless get is set.
type e2eCase struct {
	name  string // "kind" or "kind/variant"
	fault string // the [[fault]] table's keys after kind
	get   bool   // a GET carrying Last-Event-ID: e1 instead of the POST
	raw   bool   // read the response off the TCP connection
	hold  string // the upstream keeps the stream open after "all" events or the "priming" one
	// at is where the fault acts, as logged ("exchange", "stream",
	// "event N").
	at    string
	check func(t *testing.T, r *e2eResult)
}

func (c *e2eCase) kind() string { k, _, _ := strings.Cut(c.name, "/"); return k }

// timed: the case's fault acts on a timer of the proxy's clock, which the
// test fires once the first event is read.
func (c *e2eCase) timed() bool { return c.name == "close/after" || c.name == "idle-close" }

// e2eResult is what crossed the wire.
type e2eResult struct {
	status  int
	header  http.Header
	body    string
	err     error // how reading the body ended (nil: a clean end)
	chunks  []int // raw only: the sizes of the HTTP/1.1 chunks
	up      *upstreamLog
	waits   []time.Duration
	waitHit []int // requests the upstream had seen at each wait
}

// TestProfileFaultsOnTheWire runs every fault kind from a TOML profile
// through a running fray and checks what the client (and, for request
// faults, the upstream) received.
func TestProfileFaultsOnTheWire(t *testing.T) {
	cases := e2eCases()
	covered := map[string]bool{}
	for _, c := range cases {
		covered[c.kind()] = true
	}
	for _, k := range faults.Kinds() {
		if !covered[k.Name] {
			t.Errorf("fault kind %q has no end-to-end case", k.Name)
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkNoLeaks(t)
			r, rec := runE2E(t, &c)
			c.check(t, r)
			requireFaultLogged(t, rec, c.kind(), c.at)
		})
	}
}

func e2eCases() []e2eCase {
	body := func(want string) func(*testing.T, *e2eResult) {
		return func(t *testing.T, r *e2eResult) {
			t.Helper()
			r.wantClean(t)
			if r.body != want {
				t.Fatalf("client got\n%q\nwant\n%q", r.body, want)
			}
		}
	}
	primingThenCancelled := func(t *testing.T, r *e2eResult) {
		body(primingEvent)(t, r)
		r.up.wantCancelled(t)
	}
	waited := func(want ...time.Duration) func(*testing.T, *e2eResult) {
		return func(t *testing.T, r *e2eResult) {
			body(threeEvents)(t, r)
			if fmt.Sprint(r.waits) != fmt.Sprint(want) {
				t.Fatalf("waits %v, want %v", r.waits, want)
			}
		}
	}
	return []e2eCase{
		{name: "drop", fault: `rpc_kind = "notification"`, at: "event 1",
			check: body(primingEvent + responseEvent)},
		{name: "delay", fault: "rpc_kind = \"response\"\ndelay = \"250ms\"", at: "event 2",
			check: waited(250 * time.Millisecond)},
		{name: "duplicate", fault: "rpc_kind = \"response\"\ncopies = 2", at: "event 2",
			check: body(primingEvent + progressEvent + responseEvent + responseEvent + responseEvent)},
		{name: "strip-retry", fault: "priming = true", at: "event 0",
			check: body("id: p\ndata:\n\n" + progressEvent + responseEvent)},
		{name: "set-retry", fault: "priming = true\nretry = \"5s\"", at: "event 0",
			check: body("id: p\nretry: 5000\ndata:\n\n" + progressEvent + responseEvent)},
		{name: "strip-id", fault: `rpc_kind = "response"`, at: "event 2",
			check: body(primingEvent + progressEvent + "data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\n")},
		{name: "rewrite-id", fault: "nth = 1\nid = \"{id}-x\"", at: "event 1",
			check: body(primingEvent + strings.Replace(progressEvent, "id: 1\n", "id: 1-x\n", 1) + responseEvent)},
		{name: "drop-priming", at: "event 0",
			check: body(progressEvent + responseEvent)},
		{name: "corrupt", fault: `rpc_kind = "response"`, at: "event 2",
			check: body(primingEvent + progressEvent + "id: 2\ndata: {\"jsonrpc\":\"2.0\",\"}{\n\n")},
		{name: "close", fault: "after_priming = true", hold: "all", at: "event 0", check: primingThenCancelled},
		{name: "close/after", fault: `after = "5s"`, hold: "priming", at: "stream", check: checkTimedClose},
		{name: "idle-close", fault: `silence = "5s"`, hold: "priming", at: "stream", check: checkTimedClose},
		{name: "buffer", fault: "events = 2", raw: true, at: "event 0",
			check: func(t *testing.T, r *e2eResult) {
				body(threeEvents)(t, r)
				// The priming event is held until the progress event
				// releases it: it never leaves alone.
				if len(r.chunks) == 0 || r.chunks[0] < len(primingEvent)+len(progressEvent) {
					t.Fatalf("chunk sizes %v: the first holds less than the priming and progress events", r.chunks)
				}
			}},
		{name: "lose", fault: "after_events = 1\nevents = 1", hold: "all", at: "event 1", check: primingThenCancelled},
		{name: "reset", fault: "after_priming = true", raw: true, at: "event 1",
			check: func(t *testing.T, r *e2eResult) {
				if !errors.Is(r.err, syscall.ECONNRESET) {
					t.Fatalf("read ended with %v after %q, want a connection reset", r.err, r.body)
				}
			}},
		{name: "stall", fault: "nth = 1\nduration = \"45s\"", at: "event 1",
			check: waited(45 * time.Second)},
		{name: "throttle", fault: "bytes_per_second = 100\nburst = 10", at: "stream",
			check: func(t *testing.T, r *e2eResult) {
				body(threeEvents)(t, r)
				// In waits of at most 10 bytes' worth.
				for _, w := range r.waits {
					if w > 100*time.Millisecond {
						t.Fatalf("one wait of %v, more than a burst's worth", w)
					}
				}
				wantThrottled(t, r.waits)
			}},
		{name: "fragment", fault: "max_piece = 4", raw: true, at: "event 0",
			check: func(t *testing.T, r *e2eResult) {
				body(threeEvents)(t, r)
				wantFragments(t, r.chunks)
			}},
		{name: "keepalive-noise", fault: "nth = 1\nlines = 2", at: "event 1",
			check: body(primingEvent + ": keepalive\n\n: keepalive\n\n" + progressEvent + responseEvent)},
		{name: "status", fault: "status = 503\nretry_after = \"1500ms\"\nbody = \"busy\"", at: "exchange",
			check: func(t *testing.T, r *e2eResult) {
				if r.status != 503 || r.header.Get("Retry-After") != "2" || r.body != "busy" {
					t.Fatalf("got %d, Retry-After %q, body %q; want 503, 2, busy", r.status, r.header.Get("Retry-After"), r.body)
				}
				r.up.wantRequests(t, 0)
			}},
		{name: "latency", fault: `delay = "300ms"`, at: "exchange",
			check: func(t *testing.T, r *e2eResult) {
				waited(300*time.Millisecond)(t, r)
				if r.waitHit[0] != 0 {
					t.Fatal("the request reached the upstream before the latency wait")
				}
			}},
		{name: "drop-request", fault: `method = "POST"`, at: "exchange",
			check: func(t *testing.T, r *e2eResult) {
				if r.status != http.StatusAccepted || r.body != "" {
					t.Fatalf("got %d %q, want 202 and no body", r.status, r.body)
				}
				r.up.wantRequests(t, 0)
			}},
		{name: "strip-last-event-id", fault: `stream = "resume"`, get: true, at: "exchange",
			check: func(t *testing.T, r *e2eResult) {
				body(threeEvents)(t, r)
				if h := r.up.only(t); len(h.Values("Last-Event-Id")) != 0 {
					t.Fatalf("upstream got Last-Event-ID %q", h.Values("Last-Event-Id"))
				}
			}},
		{name: "rewrite-last-event-id", fault: `id = "{id}-x"`, get: true, at: "exchange",
			check: func(t *testing.T, r *e2eResult) {
				body(threeEvents)(t, r)
				if got := r.up.only(t).Get("Last-Event-Id"); got != "e1-x" {
					t.Fatalf("upstream got Last-Event-ID %q, want e1-x", got)
				}
			}},
		{name: "strip-header", fault: `header = "X-Secret"`, at: "exchange",
			check: func(t *testing.T, r *e2eResult) {
				body(threeEvents)(t, r)
				if _, ok := r.header["X-Secret"]; ok {
					t.Fatalf("client got X-Secret: %v", r.header)
				}
				if r.header.Get("X-Other") != "kept" {
					t.Fatalf("other headers must pass: %v", r.header)
				}
			}},
		{name: "strip-header/request", fault: "header = \"Mcp-Session-Id\"\ndirection = \"request\"", at: "exchange",
			check: func(t *testing.T, r *e2eResult) {
				body(threeEvents)(t, r)
				if h := r.up.only(t); h.Get("Mcp-Session-Id") != "" || h.Get("Authorization") != "Bearer t" {
					t.Fatalf("upstream got %v, want no Mcp-Session-Id and the rest", h)
				}
			}},
		{name: "rewrite-header", fault: "header = \"mcp-name\"\nvalue = \"fray-mismatch\"", at: "exchange",
			check: func(t *testing.T, r *e2eResult) {
				body(threeEvents)(t, r)
				if h := r.up.only(t); len(h.Values("Mcp-Name")) != 1 || h.Get("Mcp-Name") != "fray-mismatch" || h.Get("Authorization") != "Bearer t" {
					t.Fatalf("upstream got %v, want Mcp-Name: fray-mismatch and the rest", h)
				}
			}},
	}
}

// checkTimedClose: a stream closed by time ends cleanly after what was
// sent before the timer, whatever the upstream still holds.
func checkTimedClose(t *testing.T, r *e2eResult) {
	r.wantClean(t)
	if r.body != primingEvent {
		t.Fatalf("client got %q, want only the event sent before the close", r.body)
	}
	if fmt.Sprint(r.waits) != "[5s]" {
		t.Fatalf("timers %v, want one of 5s", r.waits)
	}
	r.up.wantCancelled(t)
}

func (r *e2eResult) wantClean(t *testing.T) {
	t.Helper()
	if r.err != nil {
		t.Fatalf("response ended with %v, want a clean end (got %q)", r.err, r.body)
	}
	if r.status != http.StatusOK {
		t.Fatalf("status %d, want 200", r.status)
	}
}

// runE2E serves the case's profile in front of a scripted upstream and
// makes one request.
func runE2E(t *testing.T, c *e2eCase) (*e2eResult, *logRecorder) {
	t.Helper()
	text := e2eDecoy + "[[fault]]\nkind = \"" + c.kind() + "\"\n" + c.fault + "\n"
	plan := activeProfile(t, c.name+".toml", text)
	up := &scriptedUpstream{log: &upstreamLog{}, hold: c.hold}
	srv := httptest.NewServer(up)
	defer srv.Close()
	res := &e2eResult{up: up.log}
	var clock proxyClock = &hookClock{fakeClock: fakeClock{now: time.Unix(0, 0)}, hook: up.log.count}
	if c.timed() {
		clock = &heldClock{fakeClock: fakeClock{now: time.Unix(0, 0)}}
	}
	fray, rec := front(t, srv.URL, func(o *proxyOptions) {
		o.Faults, o.LogFaults, o.Clock = plan, true, clock
	})
	switch {
	case c.raw:
		rawRequest(t, fray, res)
	case c.timed():
		timedRequest(t, fray, res, clock.(*heldClock))
	default:
		httpRequest(t, fray, c.get, res)
	}
	srv.CloseClientConnections()
	up.wait(t)
	res.waits = clock.waits()
	if hc, ok := clock.(*hookClock); ok {
		res.waitHit = hc.hits()
	}
	return res, rec
}

type proxyClock interface {
	Now() time.Time
	AfterFunc(time.Duration, func()) func() bool
	waits() []time.Duration
}

// hookClock is a fakeClock that also records hook's answer as each wait
// starts, so a test can see what had happened by then.
type hookClock struct {
	fakeClock
	hook func() int
	hit  []int
}

func (c *hookClock) AfterFunc(d time.Duration, f func()) func() bool {
	n := c.hook()
	c.mu.Lock()
	c.hit = append(c.hit, n)
	c.mu.Unlock()
	return c.fakeClock.AfterFunc(d, f)
}

func (c *hookClock) hits() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int(nil), c.hit...)
}

// heldClock is a fakeClock whose timers run only when fire is called,
// which moves its time on by the longest of them.
type heldClock struct {
	fakeClock
	timers  []func()
	pending time.Duration
}

func (c *heldClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waited = append(c.waited, d)
	c.timers = append(c.timers, f)
	c.pending = max(c.pending, d)
	return func() bool { return false }
}

func (c *heldClock) fire() {
	c.mu.Lock()
	ts := c.timers
	c.timers = nil
	c.now = c.now.Add(c.pending)
	c.pending = 0
	c.mu.Unlock()
	for _, f := range ts {
		go f()
	}
}

// httpRequest makes the case's request with net/http.
func httpRequest(t *testing.T, fray string, get bool, res *e2eResult) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, fray+"/mcp", strings.NewReader(e2eCall))
	req.Header.Set("Content-Type", "application/json")
	if get {
		req, _ = http.NewRequest(http.MethodGet, fray+"/mcp", nil)
		req.Header.Set("Last-Event-ID", "e1")
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", "s1")
	req.Header.Set("Authorization", "Bearer t")
	client := &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	resp := do(t, client, req)
	body, err := readBody(resp)
	res.status, res.header, res.body, res.err = resp.StatusCode, resp.Header, body, err
}

// timedRequest reads the first event, then lets the close timer fire and
// reads to the end.
func timedRequest(t *testing.T, fray string, res *e2eResult, clock *heldClock) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, fray+"/mcp", strings.NewReader(e2eCall))
	client := &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	resp := do(t, client, req)
	defer resp.Body.Close()
	first := make([]byte, len(primingEvent))
	if _, err := io.ReadFull(resp.Body, first); err != nil {
		t.Fatalf("first event: %v", err)
	}
	clock.fire()
	rest, err := io.ReadAll(resp.Body)
	res.status, res.header, res.body, res.err = resp.StatusCode, resp.Header, string(first)+string(rest), err
}

// rawRequest sends the POST on a bare TCP connection and reads the
// response's chunks one by one.
func rawRequest(t *testing.T, fray string, res *e2eResult) {
	t.Helper()
	conn := dialSend(t, strings.TrimPrefix(fray, "http://"), fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		strings.TrimPrefix(fray, "http://"), len(e2eCall), e2eCall))
	defer conn.Close()
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		res.err = err
		return
	}
	res.status, res.header = resp.StatusCode, resp.Header
	res.chunks, res.body, res.err = readChunks(br)
}

// readChunks reads a chunked HTTP/1.1 body off br up to its last chunk,
// and returns the size of each chunk and the body.
func readChunks(br *bufio.Reader) (sizes []int, body string, err error) {
	var b strings.Builder
	for {
		c, err := readChunk(br)
		if err != nil || c == "" {
			return sizes, b.String(), err
		}
		sizes = append(sizes, len(c))
		b.WriteString(c)
	}
}

// readChunk reads one chunk of a chunked HTTP/1.1 body off br; "" for the
// last.
func readChunk(br *bufio.Reader) (string, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return "", err
	}
	n, err := strconv.ParseInt(strings.TrimSpace(line), 16, 32)
	if err != nil {
		return "", fmt.Errorf("chunk size line %q: %w", line, err)
	}
	b := make([]byte, n+2)
	if _, err := io.ReadFull(br, b); err != nil {
		return "", err
	}
	return string(b[:n]), nil
}

// scriptedUpstream answers every request with threeEvents (and two extra
// headers), recording the request headers. With hold "all" it keeps the
// stream open after the events, with "priming" after the priming event,
// until fray cancels the request, which it records.
type scriptedUpstream struct {
	log  *upstreamLog
	hold string
	wg   sync.WaitGroup
}

func (u *scriptedUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.wg.Add(1)
	defer u.wg.Done()
	u.log.headers.add(r.Header.Clone())
	w.Header().Set("X-Secret", "s")
	w.Header().Set("X-Other", "kept")
	sseHeader(w)
	if u.hold == "priming" {
		writePieces(w, primingEvent)
	} else {
		writePieces(w, primingEvent, progressEvent, responseEvent)
	}
	if u.hold == "" {
		return
	}
	select {
	case <-r.Context().Done():
		u.log.cancelled.Add(1)
	case <-time.After(5 * time.Second):
	}
}

// wait returns once every request the upstream took has ended.
func (u *scriptedUpstream) wait(t *testing.T) {
	done := make(chan struct{})
	go func() { u.wg.Wait(); close(done) }()
	waitFor(t, done, "the upstream's handler never returned")
}

// upstreamLog is what the scripted upstream received.
type upstreamLog struct {
	headers   list[http.Header]
	cancelled atomic.Int32
}

func (l *upstreamLog) count() int { return len(l.headers.all()) }

func (l *upstreamLog) wantRequests(t *testing.T, n int) {
	t.Helper()
	if got := l.count(); got != n {
		t.Fatalf("upstream got %d requests, want %d", got, n)
	}
}

func (l *upstreamLog) only(t *testing.T) http.Header {
	t.Helper()
	l.wantRequests(t, 1)
	return l.headers.all()[0]
}

func (l *upstreamLog) wantCancelled(t *testing.T) {
	t.Helper()
	if n := l.cancelled.Load(); n != 1 {
		t.Fatalf("the upstream request was cancelled %d times, want once", n)
	}
}

// requireFaultLogged checks the "fault" log lines: exactly one, naming
// fault 1 of kind at the given place (the decoy, fault 0, never fires).
func requireFaultLogged(t *testing.T, rec *logRecorder, kind, at string) {
	t.Helper()
	lines := rec.find("fault")
	if len(lines) == 0 {
		t.Fatalf("no fault logged; log:\n%s", rec.text())
	}
	for _, l := range lines {
		if l["fault"] != "1" || l["kind"] != kind || l["level"] != "INFO" {
			t.Fatalf("fault line %v, want fault=1 kind=%s at info; log:\n%s", l, kind, rec.text())
		}
	}
	if lines[0]["at"] != at {
		t.Fatalf("fault logged at %q, want %q", lines[0]["at"], at)
	}
}
