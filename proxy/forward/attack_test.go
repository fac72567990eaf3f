package forward_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/forward"
	"github.com/frayproxy/fray/proxy/mcp"
)

// upstreamRequest is what a raw upstream read off the wire: the framing
// fields as sent, and the body as framed by them.
type upstreamRequest struct {
	method, path string
	lengths, te  []string
	body         string
}

// rawUpstream is an HTTP/1.1 server that reads requests with nothing but
// http.ReadRequest, so that it sees the framing fray sent, and answers
// each with X-Seen naming the path it read. It records every request in
// the order read.
type rawUpstream struct {
	addr string
	seen list[upstreamRequest]
}

func newRawUpstream(t *testing.T) *rawUpstream {
	t.Helper()
	u := &rawUpstream{}
	u.addr = tcpServer(t, u.serve)
	return u
}

func (u *rawUpstream) serve(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return
		}
		u.seen.add(upstreamRequest{
			method: req.Method, path: req.URL.Path, body: string(body),
			lengths: req.Header.Values("Content-Length"), te: req.Header.Values("Transfer-Encoding"),
		})
		if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nX-Seen: "+req.URL.Path+"\r\nContent-Length: 2\r\n\r\nok"); err != nil {
			return
		}
	}
}

// exchangeRaw writes req on a new connection to addr, then a last GET
// /last that asks fray to close the connection, and reads every response
// fray sends until it closes. It returns each response's status and
// X-Seen. (Closing the writing side instead would tell fray the client
// went away.)
func exchangeRaw(t *testing.T, addr, req string) (statuses []int, seen []string) {
	t.Helper()
	c := dialSend(t, addr, req+"GET /last HTTP/1.1\r\nHost: fray\r\nConnection: close\r\n\r\n")
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			if _, peek := br.Peek(1); peek == nil {
				t.Fatalf("after %d responses, unreadable bytes: %v", len(statuses), err)
			}
			return statuses, seen
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		statuses = append(statuses, resp.StatusCode)
		if s := resp.Header.Get("X-Seen"); s != "" {
			seen = append(seen, s)
		}
	}
}

// TestSmugglingCannotDesync sends the request-smuggling shapes on a raw
// connection to fray: both Content-Length and Transfer-Encoding either
// way round, two Content-Length values, obs-folded framing fields, and
// codings fray cannot frame. For each, fray and the upstream agree on
// where every request ends: the upstream reads exactly the requests whose
// answers the client gets, in order, each framed one way only (never
// both Content-Length and Transfer-Encoding), and a request hidden in a
// body reaches it as body, never as a request fray did not answer; a
// last request on the same connection shows the client's side stayed in
// step too.
func TestSmugglingCannotDesync(t *testing.T) {
	checkNoLeaks(t)
	const hidden = "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"
	head := func(fields ...string) string {
		return "POST /mcp HTTP/1.1\r\nHost: fray\r\nContent-Type: application/json\r\n" + strings.Join(fields, "\r\n") + "\r\n\r\n"
	}
	chunk := func(s string) string { return strconv.FormatInt(int64(len(s)), 16) + "\r\n" + s + "\r\n" }
	teCLBody := chunk(hidden) + "0\r\n\r\n"
	for _, tc := range []struct {
		name     string
		req      string
		statuses []int    // what the client gets, the last GET's answer included
		bodies   []string // what the upstream reads as each request's body
	}{
		{
			// A front end that honoured Content-Length would pass the hidden
			// request on as body; fray reads the body as chunked, so the
			// hidden request is the client's next, answered as such.
			name:     "CL.TE",
			req:      head("Content-Length: "+strconv.Itoa(len("0\r\n\r\n"+hidden)), "Transfer-Encoding: chunked") + "0\r\n\r\n" + hidden,
			statuses: []int{200, 200, 200}, bodies: []string{"", "", ""},
		},
		{
			// A Content-Length short of the chunked body: the hidden request
			// is chunk data, and stays body.
			name:     "TE.CL",
			req:      head("Transfer-Encoding: chunked", "Content-Length: 4") + teCLBody,
			statuses: []int{200, 200}, bodies: []string{hidden, ""},
		},
		{
			name:     "two Content-Length values",
			req:      head("Content-Length: 2", "Content-Length: 40") + "{}" + hidden,
			statuses: []int{400},
		},
		{
			name:     "a Content-Length list",
			req:      head("Content-Length: 2, 40") + "{}" + hidden,
			statuses: []int{400},
		},
		{
			name:     "the same Content-Length twice",
			req:      head("Content-Length: 2", "Content-Length: 2") + "{}",
			statuses: []int{200, 200}, bodies: []string{"{}", ""},
		},
		{
			// The fold is read as a space (RFC 9112 §5.2): chunked, whose
			// data stays body.
			name:     "obs-folded Transfer-Encoding",
			req:      head("Content-Length: 4", "Transfer-Encoding:", " chunked") + teCLBody,
			statuses: []int{200, 200}, bodies: []string{hidden, ""},
		},
		{
			name:     "obs-folded Content-Length",
			req:      head("Content-Length: 2", " 40") + "{}" + hidden,
			statuses: []int{400},
		},
		{
			name:     "a coding fray cannot frame",
			req:      head("Transfer-Encoding: xchunked", "Content-Length: 4") + teCLBody,
			statuses: []int{501},
		},
		{
			name:     "chunked twice",
			req:      head("Transfer-Encoding: chunked, chunked") + teCLBody,
			statuses: []int{501},
		},
		{
			name:     "space before the colon",
			req:      head("Content-Length : 4", "Transfer-Encoding: chunked") + teCLBody,
			statuses: []int{400},
		},
		{
			name:     "signed Content-Length",
			req:      head("Content-Length: +2") + "{}" + hidden,
			statuses: []int{400},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := newRawUpstream(t)
			addr := rawFray(t, "http://"+up.addr)
			statuses, answered := exchangeRaw(t, addr, tc.req)
			got := up.seen.all()
			if fmt.Sprint(statuses) != fmt.Sprint(tc.statuses) {
				t.Errorf("the client got %v, want %v", statuses, tc.statuses)
			}
			var paths []string
			for i, r := range got {
				paths = append(paths, r.path)
				if len(r.lengths) > 0 && len(r.te) > 0 || len(r.lengths) > 1 || len(r.te) > 1 {
					t.Errorf("request %d reached the upstream framed ambiguously: Content-Length %q, Transfer-Encoding %q", i, r.lengths, r.te)
				}
				if i < len(tc.bodies) && r.body != tc.bodies[i] {
					t.Errorf("request %d: the upstream read the body %q, want %q", i, r.body, tc.bodies[i])
				}
			}
			if fmt.Sprint(paths) != fmt.Sprint(answered) {
				t.Errorf("the upstream read %v, the client was answered for %v: fray and the upstream disagree on the framing", paths, answered)
			}
			if len(got) != len(tc.bodies) {
				t.Errorf("the upstream read %d requests %v, want %d", len(got), paths, len(tc.bodies))
			}
		})
	}
}

// TestTrickledHeadIsCut: a slowloris client sends its request head a byte
// at a time, never finishing it. fray closes the connection once the
// head-arrival limit has passed since the first byte, however steadily
// bytes come, and never forwards anything of it. The limit is the 30 s
// the README documents, shortened here to 1 s.
func TestTrickledHeadIsCut(t *testing.T) {
	checkNoLeaks(t)
	if *forward.HeadTimeout != 30*time.Second {
		t.Errorf("the head-arrival limit is %v; the README says 30 s", *forward.HeadTimeout)
	}
	const limit = time.Second
	saved := *forward.HeadTimeout
	*forward.HeadTimeout = limit
	t.Cleanup(func() { *forward.HeadTimeout = saved })

	up, hits := recordingUpstream(t, urlPath)
	addr := rawFray(t, up)

	// The clock starts before the dial: fray's header deadline starts
	// once it has accepted the connection, which may be before Dial
	// returns here.
	started := time.Now()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	var sent atomic.Int64
	trickled := make(chan struct{})
	go func() {
		defer close(trickled)
		head := "GET /slowloris HTTP/1.1\r\nHost: fray\r\nX-Pad: "
		for i := 0; ; i++ {
			b := byte('a' + i%26)
			if i < len(head) {
				b = head[i]
			}
			if _, err := c.Write([]byte{b}); err != nil {
				return
			}
			sent.Add(1)
			time.Sleep(20 * time.Millisecond) // the trickle's pace, not synchronisation
		}
	}()
	got, err := io.ReadAll(c)
	cut := time.Since(started)
	c.Close()
	<-trickled
	if isTimeout(err) {
		t.Fatalf("the connection was still open after %v, %d bytes trickled", cut, sent.Load())
	}
	if strings.HasPrefix(string(got), "HTTP/1.1 2") {
		t.Errorf("fray answered a head it never got whole: %q", got)
	}
	if cut < limit || cut > limit+3*time.Second {
		t.Errorf("cut after %v, want just past the %v limit", cut, limit)
	}
	if n := sent.Load(); n < int64(limit/(40*time.Millisecond)) {
		t.Errorf("only %d bytes trickled before the cut: the head did not keep coming", n)
	}
	t.Logf("cut after %v and %d bytes; fray sent %q", cut, sent.Load(), got)
	resp, body := sendRaw(t, addr, "GET /after HTTP/1.1\r\nHost: fray\r\nConnection: close\r\n\r\n")
	if resp.StatusCode != 200 {
		t.Fatalf("after the slow head: %d %q", resp.StatusCode, body)
	}
	// The upstream put its hits down before it answered /after.
	for len(hits) > 0 {
		if h := <-hits; h != "/after" {
			t.Errorf("%s reached the upstream", h)
		}
	}
}

// TestMillionsOfTinyLines streams tiny events, two lines each ("data: 7"
// and the empty line), through fray: every byte passes, in order, and
// what fray allocates per line and holds at once stays bounded, so the
// cost is per line, never per stream. 500,000 lines by default;
// FRAY_TINY_LINES=5000000 runs the full figure.
func TestMillionsOfTinyLines(t *testing.T) {
	checkNoLeaks(t)
	lines := envCount(t, "FRAY_TINY_LINES", 500000, 2)
	events := lines / 2
	event := func(i int) []byte { return []byte{'d', 'a', 't', 'a', ':', ' ', byte('0' + i%10), '\n', '\n'} }
	up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
		sseHeader(w)
		bw := bufio.NewWriterSize(w, 32<<10)
		for i := range events {
			if _, err := bw.Write(event(i)); err != nil {
				return
			}
		}
		_ = bw.Flush()
	})
	// A plan makes fray parse every event and ask it what to do.
	var asked atomic.Int64
	plan := &scriptPlan{event: func(*mcp.Event) faults.EventAction { asked.Add(1); return faults.EventAction{} }}
	fray, _ := front(t, up, func(o *proxyOptions) { o.Faults = plan })
	want := sha256.New()
	for i := range events {
		want.Write(event(i))
	}

	client := &http.Client{Timeout: 60 * time.Second}
	defer client.CloseIdleConnections()
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	before := liveHeap()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	go func() {
		defer close(sampled)
		tick := time.NewTicker(20 * time.Millisecond) // a measurement's pace
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				if m.HeapAlloc > peak.Load() {
					peak.Store(m.HeapAlloc)
				}
			}
		}
	}()
	started := time.Now()
	resp := do(t, client, must(http.NewRequest(http.MethodGet, fray+"/mcp", nil)))
	h := sha256.New()
	n, err := io.CopyBuffer(h, resp.Body, make([]byte, 32<<10))
	resp.Body.Close()
	took := time.Since(started)
	close(stop)
	<-sampled
	runtime.ReadMemStats(&ms1)
	if err != nil || n != int64(9*events) || !bytes.Equal(h.Sum(nil), want.Sum(nil)) {
		t.Fatalf("%d bytes, err %v; want %d unchanged", n, err, 9*events)
	}
	if asked.Load() != int64(events) {
		t.Errorf("fray parsed %d events of %d", asked.Load(), events)
	}
	perLine := float64(ms1.TotalAlloc-ms0.TotalAlloc) / float64(lines)
	held := int64(peak.Load()) - before
	t.Logf("%d lines in %v; %.0f bytes allocated a line (fray, upstream and client together); the heap peaked %d KiB above its start",
		lines, took, perLine, held>>10)
	if perLine > 64 {
		t.Errorf("%.0f bytes allocated a line", perLine)
	}
	if held > 32<<20 {
		t.Errorf("the heap peaked %d MiB above its start: something holds the stream", held>>20)
	}
}

// TestVanishingStreamClients opens 500 SSE streams through fray (2,500
// with FRAY_VANISHING_STREAMS=2500), each held open by the upstream, and
// drops every client's connection once its first event has arrived.
// Within 2 s fray has cancelled every upstream request, and its
// goroutines and file descriptors are back to what they were.
func TestVanishingStreamClients(t *testing.T) {
	streams := envCount(t, "FRAY_VANISHING_STREAMS", 500, 1)
	var open atomic.Int64
	up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/warm" {
			return
		}
		open.Add(1)
		defer open.Add(-1)
		sseHeader(w)
		writePieces(w, "id: 1\ndata: first\n\n")
		<-r.Context().Done()
	})
	addr := rawFray(t, up)
	// One exchange first, so that the server's goroutines are all running
	// when the baseline is taken.
	if resp, _ := sendRaw(t, addr, "GET /warm HTTP/1.1\r\nHost: fray\r\nConnection: close\r\n\r\n"); resp.StatusCode != 200 {
		t.Fatalf("warming up: %d", resp.StatusCode)
	}
	goroutines, fds := runtime.NumGoroutine(), openFDs(t)

	for _, err := range inParallel(streams, 20, func(i int) error {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return err
		}
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		_, err = io.WriteString(c, "GET /mcp HTTP/1.1\r\nHost: fray\r\nAccept: text/event-stream\r\n\r\n")
		var got []byte
		for buf := make([]byte, 512); err == nil && !bytes.Contains(got, []byte("data: first\n\n")); {
			var n int
			n, err = c.Read(buf)
			got = append(got, buf[:n]...)
		}
		c.(*net.TCPConn).SetLinger(0) // vanish: a reset, not a goodbye
		c.Close()
		if err != nil {
			return fmt.Errorf("stream %d: %w after %q", i, err, got)
		}
		return nil
	}) {
		t.Fatal(err)
	}
	dropped := time.Now()
	var n, f int
	for {
		n, f = runtime.NumGoroutine(), openFDs(t)
		if open.Load() == 0 && n <= goroutines && f <= fds {
			break
		}
		if time.Since(dropped) > 2*time.Second {
			buf := make([]byte, 1<<20)
			t.Logf("%s", buf[:runtime.Stack(buf, true)])
			t.Fatalf("2 s after %d clients vanished: %d upstream requests open, %d goroutines (%d before), %d descriptors (%d before)",
				streams, open.Load(), n, goroutines, f, fds)
		}
		runtime.Gosched()
		time.Sleep(10 * time.Millisecond) // polling a count, which nothing signals
	}
	t.Logf("%d streams dropped; back to %d goroutines and %d descriptors in %v", streams, n, f, time.Since(dropped))
}

// envCount returns the count the environment variable name sets, def
// when it is unset; it fails the test on a value that is no count of at
// least least.
func envCount(t *testing.T, name string, def, least int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < least {
		t.Fatalf("%s=%q is not a count of at least %d", name, v, least)
	}
	return n
}

// openFDs counts the process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents)
}
