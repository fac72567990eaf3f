package forward

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/sse"
)

// TestClientWriteErrorIsClientGone: when the flush before a read fails, the
// stream ends as the client's doing, with a clean end and no abort, even
// before the client's request context is done: the upstream is not blamed.
func TestClientWriteErrorIsClientGone(t *testing.T) {
	up := httptest.NewRequest(http.MethodGet, "http://upstream/mcp", nil)
	pm := &pump{
		p:    &Proxy{log: slog.New(slog.DiscardHandler)},
		r:    httptest.NewRequest(http.MethodGet, "http://fray/mcp", nil).WithContext(context.Background()),
		resp: &http.Response{Request: up},
		ex:   &exchange{},
	}
	pm.rec.cause = observe.ClientGone
	pm.finish(&clientWriteError{syscall.EPIPE})
	if pm.rec.cause != observe.ClientGone || pm.sink.abort {
		t.Errorf("after a failed write to the client: cause %v, abort %v; want %v, no abort", pm.rec.cause, pm.sink.abort, observe.ClientGone)
	}
	// The same error from the upstream's side is the upstream's failure.
	pm.finish(errors.New("read tcp: connection reset by peer"))
	if pm.rec.cause != observe.UpstreamFailed || !pm.sink.abort {
		t.Errorf("after a failed upstream read: cause %v, abort %v; want %v, abort", pm.rec.cause, pm.sink.abort, observe.UpstreamFailed)
	}
}

// TestGatherSizedToRead: the gathering buffer is as large as one read of
// the stream's reader can deliver: 4 KiB while it reads 4 KiB at a time
// (a paced stream, and each of ten thousand quiet ones), 32 KiB and then
// 128 KiB as a burst widens its reads; 32 KiB before it reads. A stream
// that reads little holds little while it writes, and a pool miss
// allocates as little.
func TestGatherSizedToRead(t *testing.T) {
	s := &sink{}
	var tiers []int
	check := func() {
		g := s.takeGather()
		tiers = append(tiers, cap(*g))
		putGather(g)
	}
	check()
	var body strings.Builder
	for body.Len() < 1<<20 {
		body.WriteString("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n")
	}
	s.rd = sse.NewReader(strings.NewReader(body.String()), 1<<20)
	room := -1
	for {
		if _, err := s.rd.Next(); err != nil {
			break
		}
		if r := s.rd.Room(); r != room {
			room = r
			check()
		}
	}
	if want := []int{gatherSize, gatherSmall, gatherSize, gatherBulk}; !slices.Equal(tiers, want) {
		t.Errorf("gathering buffers taken as the reads widen: %v, want %v", tiers, want)
	}
}

// countingQueue returns a Queue whose observer counts the events it gets,
// closed when the test ends.
func countingQueue(t *testing.T) (*observe.Queue, *int) {
	events := new(int)
	q := observe.NewQueue(observe.Func(func(o *observe.Observation) {
		if o.Kind == observe.KindEvent {
			*events++
		}
	}))
	t.Cleanup(q.Close)
	return q, events
}

// drainingWriter is a client's side that, at each write, drains the queue
// and records how many events its observer had by then.
type drainingWriter struct {
	http.ResponseWriter
	q      *observe.Queue
	events *int
	seen   []int // events observed at each write
}

func (w *drainingWriter) Write(b []byte) (int, error) {
	w.q.Drain()
	w.seen = append(w.seen, *w.events)
	return len(b), nil
}

func (w *drainingWriter) Flush() {}

// TestStagedEventsReachTheQueueBeforeTheClient: the events a stream staged
// are in the queue before any byte written after them reaches the client,
// whether the gathered bytes leave at the flush or because the gathering
// buffer filled, so that whatever the client does on an event is observed
// after the event.
func TestStagedEventsReachTheQueueBeforeTheClient(t *testing.T) {
	q, events := countingQueue(t)
	w := &drainingWriter{q: q, events: events}
	s := &sink{w: w, rc: http.NewResponseController(w), rec: &recorder{obs: q.Stream()}}
	emit := func(n int) {
		var ev observe.Event
		ev.Raw = []byte("data: x\n\n")
		for range n {
			s.rec.obs.Observe(&observe.Observation{Kind: observe.KindEvent, Event: &ev})
		}
	}
	emit(2)
	if err := s.send([]byte("data: x\n\ndata: x\n\n")); err != nil {
		t.Fatal(err)
	}
	if err := s.flush(); err != nil {
		t.Fatal(err)
	}
	// A burst larger than the gathering buffer leaves before the flush.
	emit(3)
	if err := s.send(bytes.Repeat([]byte("x"), gatherSize-1)); err != nil {
		t.Fatal(err)
	}
	emit(1)
	if err := s.send([]byte("data: x\n\n")); err != nil {
		t.Fatal(err)
	}
	// Each write comes after every event reported before it: the second,
	// made when the sixth event's bytes did not fit, after all six.
	if len(w.seen) != 2 || w.seen[0] != 2 || w.seen[1] != 6 {
		t.Fatalf("events observed at each write to the client: %v, want [2 6]", w.seen)
	}
	s.rec.flush()
	q.Drain()
	if *events != 6 {
		t.Fatalf("the observer got %d events, want 6", *events)
	}
}
