package forward_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/forward"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// manualClock is a fakeClock that moves only when the test says so;
// Advance runs, on the test's goroutine, every timer that falls due, those
// armed by timers included.
type manualClock struct {
	fakeClock
	timers []*manualTimer
}

type manualTimer struct {
	at   time.Time
	f    func()
	done bool
}

func (c *manualClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &manualTimer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !t.done
		t.done = true
		return was
	}
}

func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
	for {
		c.mu.Lock()
		var due *manualTimer
		for _, t := range c.timers {
			if !t.done && !t.at.After(c.now) {
				due = t
				break
			}
		}
		if due != nil {
			due.done = true
		}
		c.mu.Unlock()
		if due == nil {
			return
		}
		due.f()
	}
}

const callBody = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}`

// TestIdleCloseCountsSilenceFromTheLastRead: a stream that goes on
// sending is not cut when the silence has passed since its start, only
// once it has passed since its last byte, and then cleanly.
func TestIdleCloseCountsSilenceFromTheLastRead(t *testing.T) {
	checkNoLeaks(t)
	ev := []string{"id: p\ndata:\n\n", "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n", ": keep-alive\n\n"}
	step := []chan struct{}{make(chan struct{}), make(chan struct{})}
	up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
		sseHeader(w)
		writePieces(w, ev[0])
		for i, s := range step {
			if !until(r, s) {
				return
			}
			writePieces(w, ev[i+1])
		}
		<-r.Context().Done()
	})
	clock := &manualClock{fakeClock: fakeClock{now: time.Unix(0, 0)}}
	plan := scriptPlan{start: faults.StreamAction{CloseIdle: 125 * time.Second}}
	fray, _ := front(t, up, func(o *proxyOptions) { o.Faults = &plan; o.Clock = clock })
	req, _ := http.NewRequest(http.MethodPost, fray+"/mcp", strings.NewReader(callBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp := do(t, http.DefaultClient, req)
	defer resp.Body.Close()
	read := func(want string) {
		t.Helper()
		b := make([]byte, len(want))
		if _, err := io.ReadFull(resp.Body, b); err != nil || string(b) != want {
			t.Fatalf("read %q, %v; want %q", b, err, want)
		}
	}
	read(ev[0])
	clock.Advance(124 * time.Second)
	close(step[0])
	read(ev[1]) // read by fray at 124s
	clock.Advance(2 * time.Second)
	close(step[1])
	read(ev[2]) // still open at 126s; a comment is a byte too
	clock.Advance(124 * time.Second)
	clock.Advance(time.Second) // 125s after the last byte
	rest, err := io.ReadAll(resp.Body)
	if err != nil || len(rest) != 0 {
		t.Errorf("after the silence: %q, %v; want a clean end", rest, err)
	}
}

// TestBufferReleasesHeldEventsInOneBurst reads the response's chunks raw:
// the held events leave in the same flush as the event that releases
// them, and the stream's end releases what is still held.
func TestBufferReleasesHeldEventsInOneBurst(t *testing.T) {
	checkNoLeaks(t)
	ev := []string{"id: p\ndata:\n\n", "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n",
		"id: 2\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n", "id: 3\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\n"}
	decided := make(chan struct{})
	next, last := make(chan struct{}), make(chan struct{})
	up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
		sseHeader(w)
		writePieces(w, ev[0], ev[1])
		<-next
		writePieces(w, ev[2])
		<-last
		writePieces(w, ev[3])
	})
	// Events 0, 1 and 3 are held; 2 releases 0 and 1; the end releases 3.
	var seen list[string]
	var beforeRelease atomic.Int32 // events observed when event 2 came
	beforeRelease.Store(-1)
	plan := scriptPlan{event: func(e *mcp.Event) faults.EventAction {
		switch e.Index {
		case 1:
			close(decided)
		case 2:
			beforeRelease.Store(int32(len(seen.all())))
		}
		return faults.EventAction{Buffer: e.Index != 2}
	}}
	obs := observe.Func(func(o *observe.Observation) {
		if o.Event != nil {
			seen.add(fmt.Sprintf("%d %s", o.Event.Index, o.Event.Fate))
		}
	})
	fray, _ := front(t, up, func(o *proxyOptions) { o.Faults, o.Observer = &plan, obs })
	conn := dialSend(t, strings.TrimPrefix(fray, "http://"), fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: fray\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(callBody), callBody))
	br := bufio.NewReader(conn)
	if _, err := http.ReadResponse(br, nil); err != nil {
		t.Fatal(err)
	}
	<-decided
	// Whatever fray flushed of events 0 and 1 is on the wire before it
	// reads event 2, so a chunk of them alone would come first.
	close(next)
	if got := chunk(t, br); got != ev[0]+ev[1]+ev[2] {
		t.Errorf("first chunk %q, want the held events with the one that released them", got)
	}
	close(last)
	var rest strings.Builder
	for c := chunk(t, br); c != ""; c = chunk(t, br) {
		rest.WriteString(c)
	}
	if rest.String() != ev[3] {
		t.Errorf("after the burst %q, want the event the end released", rest.String())
	}
	// A held event is reported when it leaves, in order; the observer
	// has them all once the stream is over (the end is reported last).
	conn.Close()
	if got := strings.Join(seen.all(), ", "); got != "0 delivered, 1 delivered, 2 delivered, 3 delivered" ||
		beforeRelease.Load() != 0 {
		t.Errorf("observed %q, %d of them before the release; want all four delivered, none while held",
			got, beforeRelease.Load())
	}
}

// chunk reads one chunk of a chunked body; "" for the last.
func chunk(t *testing.T, br *bufio.Reader) string {
	t.Helper()
	c, err := readChunk(br)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestBufferBoundedInBytes: a buffer of a count of events (events = 1000)
// holds events of 100 KB for no more than MaxBuffered bytes: the client
// gets the first while the upstream, which waits for it, has sent only
// a little more than MaxBuffered.
func TestBufferBoundedInBytes(t *testing.T) {
	checkNoLeaks(t)
	plan := activeProfile(t, "buffer.toml", "[[fault]]\nkind = \"buffer\"\nevents = 1000\n")
	const size = 100_000
	firstGot := make(chan struct{})
	waited := make(chan bool, 1)
	up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
		sseHeader(w)
		data := strings.Repeat("x", size)
		for i := range forward.MaxBuffered/size + 2 {
			fmt.Fprintf(w, "id: %d\ndata: %s\n\n", i, data)
			w.(http.Flusher).Flush()
		}
		select {
		case <-firstGot:
			waited <- true
		case <-time.After(10 * time.Second): // the bound of the test, not a synchronisation
			waited <- false
		case <-r.Context().Done():
			waited <- false
		}
	})
	fray, _ := front(t, up, func(o *proxyOptions) { o.Faults = plan })
	resp := get(t, fray+"/mcp")
	defer resp.Body.Close()
	br := firstLine(t, resp.Body, "id: 0\n")
	close(firstGot)
	_, _ = io.Copy(io.Discard, br)
	if !<-waited {
		t.Errorf("the client got nothing until the stream ended: the buffer held more than %d bytes", forward.MaxBuffered)
	}
}
