package forward

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/frayproxy/fray/proxy/observe"
)

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
