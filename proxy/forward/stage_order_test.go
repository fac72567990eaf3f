package forward

import (
	"bytes"
	"net/http"
	"slices"
	"strconv"
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
	pm := &pump{p: &Proxy{opts: Options{Observer: q}, stager: q, kicker: q}, w: w}
	pm.rc = http.NewResponseController(w)
	emit := func(n int) {
		var ev observe.Event
		ev.Raw = []byte("data: x\n\n")
		for range n {
			pm.observe(&observe.Observation{Kind: observe.KindEvent, Event: &ev})
		}
	}
	emit(2)
	if err := pm.send([]byte("data: x\n\ndata: x\n\n")); err != nil {
		t.Fatal(err)
	}
	if err := pm.flush(); err != nil {
		t.Fatal(err)
	}
	// A burst larger than the gathering buffer leaves before the flush.
	emit(3)
	if err := pm.send(bytes.Repeat([]byte("x"), gatherSize-1)); err != nil {
		t.Fatal(err)
	}
	emit(1)
	if err := pm.send([]byte("data: x\n\n")); err != nil {
		t.Fatal(err)
	}
	// Each write comes after every event reported before it: the second,
	// made when the sixth event's bytes did not fit, after all six.
	if len(w.seen) != 2 || w.seen[0] != 2 || w.seen[1] != 6 {
		t.Fatalf("events observed at each write to the client: %v, want [2 6]", w.seen)
	}
	pm.releaseScratch()
	q.Drain()
	if *events != 6 {
		t.Fatalf("the observer got %d events, want 6", *events)
	}
}

// lendsNone is a Queue with no Stage to lend.
type lendsNone struct{ *observe.Queue }

func (lendsNone) Stage() *observe.Stage { return nil }

// TestEventsWithNoStageToLend: when the queue has no Stage to lend, the
// stream reports its events one by one, and the observer gets them all.
func TestEventsWithNoStageToLend(t *testing.T) {
	q, events := countingQueue(t)
	ln := lendsNone{q}
	pm := &pump{p: &Proxy{opts: Options{Observer: ln}, stager: ln, kicker: ln}}
	var ev observe.Event
	ev.Raw = []byte("data: x\n\n")
	for range 3 {
		pm.observe(&observe.Observation{Kind: observe.KindEvent, Event: &ev})
	}
	pm.releaseScratch()
	q.Drain()
	if *events != 3 {
		t.Fatalf("the observer got %d events, want 3", *events)
	}
}

// countingStager is a Queue that counts the Stages it lends.
type countingStager struct {
	*observe.Queue
	lent int
}

func (c *countingStager) Stage() *observe.Stage {
	c.lent++
	return c.Queue.Stage()
}

// TestALoneEventTakesNoStage: the first event since the stream last wrote
// or waited goes to the queue directly; only the events of a burst after
// it take a Stage, and the observer gets them all in order.
func TestALoneEventTakesNoStage(t *testing.T) {
	var got []string
	q := observe.NewQueue(observe.Func(func(o *observe.Observation) {
		got = append(got, string(o.Event.Data))
	}))
	t.Cleanup(q.Close)
	cs := &countingStager{Queue: q}
	pm := &pump{p: &Proxy{opts: Options{Observer: cs}, stager: cs, kicker: cs}}
	emit := func(data string) {
		ev := observe.Event{}
		ev.Raw, ev.Data = []byte("data: "+data+"\n\n"), []byte(data)
		pm.observe(&observe.Observation{Kind: observe.KindEvent, Event: &ev})
	}
	for i, lent := range []int{0, 0, 1, 1, 1} {
		if i == 1 {
			// A lone event, then a burst.
			if err := pm.flush(); err != nil {
				t.Fatal(err)
			}
		}
		emit(strconv.Itoa(i))
		if cs.lent != lent {
			t.Fatalf("after event %d the stream had borrowed %d Stages, want %d", i, cs.lent, lent)
		}
	}
	pm.releaseScratch()
	q.Drain()
	if want := []string{"0", "1", "2", "3", "4"}; !slices.Equal(got, want) {
		t.Fatalf("the observer got %q, want %q", got, want)
	}
}
