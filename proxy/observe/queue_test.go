package observe

import (
	"bytes"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/mcp"
)

// lineRecorder keeps a line per observation it is passed, with the bytes of
// events as they were when it got them; hold, when set, is called first,
// with the observation.
type lineRecorder struct {
	mu    sync.Mutex
	lines []string
	got   chan struct{} // receives after each observation, when not nil
	hold  func(o *Observation)
}

func (r *lineRecorder) Observe(o *Observation) {
	if r.hold != nil {
		r.hold(o)
	}
	line := fmt.Sprintf("%d %s", o.Exchange, o.Kind)
	if o.Kind == KindRequest {
		line += fmt.Sprintf(" %d", o.SessionSeq)
	}
	if o.Event != nil {
		line += fmt.Sprintf(" %s id=%s data=%s", o.Event.Raw, o.Event.ID, o.Event.Data)
		for _, f := range o.Fired {
			line += " fired=" + f.Kind
		}
	}
	r.mu.Lock()
	r.lines = append(r.lines, line)
	r.mu.Unlock()
	if r.got != nil {
		r.got <- struct{}{}
	}
}

func (r *lineRecorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.lines...)
}

// await waits for n more observations to reach r, whose got is set.
func (r *lineRecorder) await(t *testing.T, n int) {
	t.Helper()
	for range n {
		select {
		case <-r.got:
		case <-time.After(10 * time.Second):
			t.Fatal("a kicked event never reached the observer")
		}
	}
}

// cloneEvent is e with its bytes copied, as an observer keeps an event:
// what it is passed is valid only during the call.
func cloneEvent(e Event) Event {
	for _, b := range []*[]byte{&e.Raw, &e.Type, &e.ID, &e.Data, &e.RPCMethod, &e.RPCID, &e.Delivered, &e.DeliveredID} {
		*b = bytes.Clone(*b)
	}
	return e
}

// recordingQueue is a Queue, closed when the test ends, in front of a
// lineRecorder.
func recordingQueue(t *testing.T) (*Queue, *lineRecorder) {
	rec := &lineRecorder{}
	q := NewQueue(rec)
	t.Cleanup(q.Close)
	return q, rec
}

// event reports an event of exchange ex from buf, which the caller reuses
// once Observe returns, as the proxy does.
func event(q Observer, buf []byte, ex uint64, n int, fired []faults.Firing) {
	buf = strconv.AppendInt(buf[:0], int64(n), 10)
	e := Event{}
	e.Raw, e.ID, e.Data = buf, buf, buf
	q.Observe(&Observation{Kind: KindEvent, Exchange: ex, Event: &e, Fired: fired})
	clear(buf[:cap(buf)])
}

func TestQueueOrderAndCopies(t *testing.T) {
	q, rec := recordingQueue(t)
	buf := make([]byte, 0, 16)
	event(q, buf, 1, 1, nil)
	event(q, buf, 1, 2, []faults.Firing{{Kind: "drop"}})
	if got := rec.seen(); len(got) != 0 {
		t.Fatalf("events reached the observer before they were due: %q", got)
	}
	// A request of another exchange: the events queued before it come
	// first, with their bytes as they were reported.
	q.Observe(&Observation{Kind: KindRequest, Exchange: 2})
	want := []string{"1 event 1 id=1 data=1", "1 event 2 id=2 data=2 fired=drop", "2 request 0"}
	if got := rec.seen(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("observer saw %q, want %q", got, want)
	}
}

// TestQueueKick: a Kick arms the Queue's timer for kickDelay, before it
// returns (on the caller's goroutine, waking none), rather than pass the
// events on at once; more Kicks before it fires arm nothing more; and when
// it fires every event queued meanwhile reaches the observer together,
// from the Queue's goroutine.
func TestQueueKick(t *testing.T) {
	rec := &lineRecorder{got: make(chan struct{}, 8)}
	q := NewQueue(rec)
	fire := make(chan time.Time)
	armed := make(chan time.Duration, 8)
	q.newTimer = func() (<-chan time.Time, func(time.Duration)) {
		return fire, func(d time.Duration) {
			if d >= 0 {
				armed <- d
			}
		}
	}
	defer q.Close()
	buf := make([]byte, 0, 16)
	event(q, buf, 1, 7, nil)
	q.Kick()
	select {
	case d := <-armed:
		if d != kickDelay {
			t.Fatalf("a Kick armed the timer for %v, want %v", d, kickDelay)
		}
	default:
		t.Fatal("Kick returned before it armed the timer")
	}
	// The goroutine waits for the timer: nothing else passes the
	// events on until it fires.
	event(q, buf, 1, 8, nil)
	q.Kick()
	if got := rec.seen(); len(got) != 0 {
		t.Fatalf("the observer got %q before the timer fired", got)
	}
	fire <- time.Time{}
	rec.await(t, 2)
	if got := rec.seen(); !slices.Equal(got, []string{"1 event 7 id=7 data=7", "1 event 8 id=8 data=8"}) {
		t.Fatalf("observer saw %q", got)
	}
	select {
	case d := <-armed:
		t.Fatalf("a second Kick before the timer fired armed it again (%v)", d)
	default:
	}
}

// TestQueueKickOnTime: with its own timer, the Queue passes a kicked event
// on by itself.
func TestQueueKickOnTime(t *testing.T) {
	rec := &lineRecorder{got: make(chan struct{}, 8)}
	q := NewQueue(rec)
	defer q.Close()
	event(q, make([]byte, 0, 16), 1, 7, nil)
	q.Kick()
	rec.await(t, 1)
	if got := rec.seen(); len(got) != 1 || got[0] != "1 event 7 id=7 data=7" {
		t.Fatalf("observer saw %q", got)
	}
}

// TestQueueBounds: more events than a batch holds, and one larger than its
// bytes, all arrive once, in order.
func TestQueueBounds(t *testing.T) {
	q, rec := recordingQueue(t)
	buf := make([]byte, 0, 16)
	n := 3*queueEvents + 5
	for i := range n {
		event(q, buf, 1, i, nil)
	}
	big := Event{}
	big.Raw = bytes.Repeat([]byte("x"), queueBytes+1)
	q.Observe(&Observation{Kind: KindEvent, Exchange: 1, Event: &big})
	event(q, buf, 1, n, nil)
	q.Drain()
	got := rec.seen()
	if len(got) != n+2 {
		t.Fatalf("observer saw %d observations, want %d", len(got), n+2)
	}
	inOrder(t, got, n, queueBytes)
}

// inOrder fails t unless got holds, first, events 0 to n-1 of exchange 1
// as event reports them, then a large event of at least big bytes, then
// event n.
func inOrder(t *testing.T, got []string, n, big int) {
	t.Helper()
	for i := range n {
		if want := fmt.Sprintf("1 event %d id=%d data=%d", i, i, i); got[i] != want {
			t.Fatalf("observation %d is %q, want %q", i, got[i], want)
		}
	}
	if len(got[n]) < big || got[n+1] != fmt.Sprintf("1 event %d id=%d data=%d", n, n, n) {
		t.Fatalf("the large event and the one after it came out of order: %.40q, %q", got[n], got[n+1])
	}
}

// TestQueueClose: what was queued before Close is passed on, nothing
// after, and the goroutine has ended.
func TestQueueClose(t *testing.T) {
	rec := &lineRecorder{}
	q := NewQueue(rec)
	buf := make([]byte, 0, 16)
	event(q, buf, 1, 1, nil)
	q.Kick()
	event(q, buf, 1, 2, nil)
	q.Close()
	q.Close()
	select {
	case <-q.done:
	default:
		t.Fatal("the Queue's goroutine outlived Close")
	}
	event(q, buf, 1, 3, nil)
	q.Observe(&Observation{Kind: KindEnd, Exchange: 1})
	q.Kick()
	q.Drain()
	want := []string{"1 event 1 id=1 data=1", "1 event 2 id=2 data=2"}
	if got := rec.seen(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("observer saw %q, want %q", got, want)
	}
}

// TestQueueActedOn: an exchange that acts on another's event (a client
// that got it and resumes) is observed after that event, whichever
// goroutine passes the event on, under the race detector too.
func TestQueueActedOn(t *testing.T) {
	q, rec := recordingQueue(t)
	const streams, events = 8, 500
	var wg sync.WaitGroup
	for s := range streams {
		wg.Add(1)
		ex := uint64(1 + 2*s)
		acted := make(chan int)
		go func() {
			defer wg.Done()
			buf := make([]byte, 0, 16)
			for i := range events {
				event(q, buf, ex, i, nil)
				if i%50 == 49 {
					q.Kick()
					acted <- i
				}
			}
			close(acted)
			q.Observe(&Observation{Kind: KindEnd, Exchange: ex})
		}()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range acted {
				q.Observe(&Observation{Kind: KindRequest, Exchange: ex + 1, SessionSeq: i})
			}
		}()
	}
	wg.Wait()
	q.Drain()
	got := rec.seen()
	if len(got) != streams*(events+1+events/50) {
		t.Fatalf("observer saw %d observations, want %d", len(got), streams*(events+1+events/50))
	}
	next := map[uint64]int{}
	for _, line := range got {
		var ex uint64
		var kind string
		var n int
		fmt.Sscanf(line, "%d %s %d", &ex, &kind, &n)
		switch {
		case kind == "event":
			if n != next[ex] {
				t.Fatalf("exchange %d: event %d came when %d was due", ex, n, next[ex])
			}
			next[ex]++
		case kind == "end":
			if next[ex] != events {
				t.Fatalf("exchange %d ended after %d of its %d events", ex, next[ex], events)
			}
		case kind == "request" && next[ex-1] <= n:
			t.Fatalf("exchange %d acted on event %d of exchange %d before the observer saw it", ex, n, ex-1)
		}
	}
}

// TestQueueRequestAfterItsEvent: a request that follows an event, from
// another goroutine, comes right after it.
func TestQueueRequestAfterItsEvent(t *testing.T) {
	q, rec := recordingQueue(t)
	buf := make([]byte, 0, 16)
	for i := range 10 {
		event(q, buf, 1, i, nil)
		done := make(chan struct{})
		go func() {
			q.Observe(&Observation{Kind: KindRequest, Exchange: 2})
			close(done)
		}()
		<-done
	}
	q.Drain()
	got := rec.seen()
	for i := range 10 {
		if want := fmt.Sprintf("1 event %d id=%d data=%d", i, i, i); got[2*i] != want || got[2*i+1] != "2 request 0" {
			t.Fatalf("observations %d and %d are %q and %q, want %q then the request", 2*i, 2*i+1, got[2*i], got[2*i+1], want)
		}
	}
}

// TestQueueCopiesParts: an event's fields, parts of its raw bytes or of
// its data or not, reach the observer as they were reported, though the
// proxy reuses every buffer they came from.
func TestQueueCopiesParts(t *testing.T) {
	var got []Event
	q := NewQueue(Func(func(o *Observation) { got = append(got, cloneEvent(*o.Event)) }))
	defer q.Close()
	raw := []byte("event: note\nid: 7\ndata: {\"method\":\"a\",\ndata: \"id\":1}\n\n")
	joined := []byte("{\"method\":\"a\",\n\"id\":1}") // the data lines joined, elsewhere
	delivered := []byte("event: note\nid: 7-x\ndata: ...\n\n")
	other := []byte("kind")
	var e Event
	e.Raw, e.Type, e.ID = raw, raw[7:11], raw[16:17]
	e.Data, e.RPCMethod, e.RPCID = joined, joined[11:12], joined[20:21]
	e.Delivered, e.DeliveredID = delivered, delivered[16:19]
	e.Retry = 5
	want := e
	want.Raw, want.Type, want.ID, want.Data = bytes.Clone(raw), []byte("note"), []byte("7"), bytes.Clone(joined)
	want.RPCMethod, want.RPCID, want.Delivered, want.DeliveredID = []byte("a"), []byte("1"), bytes.Clone(delivered), []byte("7-x")
	// And one whose type comes from none of its buffers.
	e2 := e
	e2.Type = other
	want2 := want
	want2.Type = []byte("kind")
	q.Observe(&Observation{Kind: KindEvent, Event: &e})
	q.Observe(&Observation{Kind: KindEvent, Event: &e2})
	for _, b := range [][]byte{raw, joined, delivered, other} {
		clear(b)
	}
	q.Drain()
	if len(got) != 2 || !reflect.DeepEqual(got[0], want) || !reflect.DeepEqual(got[1], want2) {
		t.Fatalf("observer got\n%+v\nwant\n%+v\n%+v", got, want, want2)
	}
}

// TestQueueClassifies: an event the exchange left Unclassified reaches the
// observer with the JSON-RPC identity its data has, whether it was
// queued or, too large for a batch, passed on directly, though the
// exchange reuses the buffer; an event classified already is passed on as
// it came.
func TestQueueClassifies(t *testing.T) {
	type seen struct {
		kind          mcp.RPCKind
		method, id    string
		unclassified  bool
		dataUnchanged bool
	}
	var got []seen
	q := NewQueue(Func(func(o *Observation) {
		e := o.Event
		got = append(got, seen{e.RPCKind, string(e.RPCMethod), string(e.RPCID), e.Unclassified, bytes.HasPrefix(e.Data, []byte(`{"jsonrpc"`))})
	}))
	defer q.Close()
	msg := func(id int, pad int) []byte {
		return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"pad":"%s"}}`, id, bytes.Repeat([]byte("x"), pad))
	}
	buf := make([]byte, 0, queueBytes+256)
	report := func(data []byte, unclassified bool) {
		buf = append(buf[:0], data...)
		e := Event{Unclassified: unclassified}
		e.Raw, e.Data, e.Dispatched = buf, buf, true
		if !unclassified {
			e.RPCKind, e.RPCMethod, e.RPCID = mcp.RPCNotification, []byte("as/reported"), nil
		}
		q.Observe(&Observation{Kind: KindEvent, Exchange: 1, Event: &e})
		clear(buf[:cap(buf)])
	}
	report(msg(7, 0), true)
	report(msg(8, queueBytes), true) // too large: passed on directly
	report(msg(9, 0), false)
	report([]byte("not json"), true)
	q.Drain()
	want := []seen{
		{mcp.RPCRequest, "tools/call", "7", false, true},
		{mcp.RPCRequest, "tools/call", "8", false, true},
		{mcp.RPCNotification, "as/reported", "", false, true},
		{mcp.RPCNone, "", "", false, false},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("observer saw\n%+v\nwant\n%+v", got, want)
	}
}

// heldQueue returns a Queue whose goroutine is held in its observer with
// a first event, until free is called (at the latest when the test ends,
// before the Queue closes, which waits for the goroutine).
func heldQueue(t *testing.T) (q *Queue, free func()) {
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	q = NewQueue(Func(func(*Observation) {
		once.Do(func() {
			close(entered)
			<-release
		})
	}))
	t.Cleanup(q.Close)
	var freed sync.Once
	free = func() { freed.Do(func() { close(release) }) }
	t.Cleanup(free) // cleanups run last first: before Close
	if !q.Classifies() {
		t.Fatal("an empty Queue does not classify")
	}
	event(q, make([]byte, 0, 16), 1, 0, nil)
	q.Kick()
	<-entered // the goroutine holds the first batch
	return q, free
}

// TestQueueClassifiesWhileItKeepsUp: the Queue takes classification off
// the exchanges' path while its goroutine keeps up, and hands it back once
// classifyBelow events wait for it.
func TestQueueClassifiesWhileItKeepsUp(t *testing.T) {
	q, free := heldQueue(t)
	buf := make([]byte, 0, 16)
	for i := range classifyBelow - 1 {
		event(q, buf, 1, i+1, nil)
	}
	if !q.Classifies() {
		t.Fatalf("with %d events waiting the Queue does not classify", classifyBelow-1)
	}
	event(q, buf, 1, classifyBelow, nil)
	if q.Classifies() {
		t.Fatalf("with %d events waiting behind a busy goroutine the Queue still classifies", classifyBelow)
	}
	free()
	q.Drain()
	if !q.Classifies() {
		t.Fatal("once drained the Queue does not classify")
	}
}

// TestQueueCarriesEveryField: an event's Observation and Event reach the
// observer as they were queued, every field of them, each set alone (so
// that two fields packed into one place would show) and all at once, and
// a slice empty but not nil stays so. A field added to either struct
// fails here until the slot carries it.
func TestQueueCarriesEveryField(t *testing.T) {
	// Set by the Queue, not carried: Kind and Event say what a slot is,
	// the other pointers keep an observation out of the batch, and
	// Unclassified is cleared as the event is classified
	// (TestQueueClassifies).
	skip := map[string]bool{
		"Kind": true, "Event": true, "Request": true, "Response": true, "End": true, "Profile": true,
		"Unclassified": true,
	}
	type pair struct {
		O Observation
		E Event
	}
	type leaf struct {
		name string
		path []int // in a pair
	}
	var leaves []leaf
	var walk func(prefix []int, name string, typ reflect.Type)
	walk = func(prefix []int, name string, typ reflect.Type) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			path := append(append([]int(nil), prefix...), i)
			if f.Anonymous {
				walk(path, name, f.Type)
				continue
			}
			if !skip[f.Name] {
				leaves = append(leaves, leaf{name + "." + f.Name, path})
			}
		}
	}
	walk([]int{0}, "Observation", reflect.TypeFor[Observation]())
	walk([]int{1}, "Event", reflect.TypeFor[Event]())

	// set gives field v a value of its own, from n; empty makes a slice
	// empty rather than nil.
	set := func(v reflect.Value, n int, empty bool) {
		switch v.Kind() {
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Int, reflect.Int64:
			v.SetInt(int64(1000 + n))
		case reflect.Uint8:
			v.SetUint(uint64(1 + n%5))
		case reflect.Uint64:
			v.SetUint(uint64(2000 + n))
		case reflect.String:
			v.SetString(fmt.Sprintf("s%d", n))
		case reflect.Slice:
			switch {
			case empty:
				v.Set(reflect.MakeSlice(v.Type(), 0, 4))
			case v.Type() == reflect.TypeFor[[]byte]():
				v.SetBytes([]byte(fmt.Sprintf("bytes %d", n)))
			case v.Type() == reflect.TypeFor[[]faults.Firing]():
				v.Set(reflect.ValueOf([]faults.Firing{{Index: n, Kind: "drop"}, {Index: n + 1, Kind: "delay", Traits: faults.EndsStream}}))
			default:
				t.Fatalf("no value for a %s", v.Type())
			}
		default:
			t.Fatalf("no value for a %s", v.Type())
		}
	}
	// deep copies what the observer gets, which is valid only during the
	// call.
	deep := func(o *Observation) pair {
		p := pair{O: *o, E: cloneEvent(*o.Event)}
		p.O.Event, p.O.Fired = nil, slices.Clone(o.Fired)
		return p
	}
	var cases []pair
	var names []string
	all := pair{}
	for i, l := range leaves {
		one := pair{}
		set(reflect.ValueOf(&one).Elem().FieldByIndex(l.path), i, false)
		set(reflect.ValueOf(&all).Elem().FieldByIndex(l.path), i, false)
		cases, names = append(cases, one), append(names, l.name)
		if reflect.ValueOf(&one).Elem().FieldByIndex(l.path).Kind() == reflect.Slice {
			empty := pair{}
			set(reflect.ValueOf(&empty).Elem().FieldByIndex(l.path), i, true)
			cases, names = append(cases, empty), append(names, l.name+" (empty)")
		}
	}
	cases, names = append(cases, all), append(names, "every field")
	// Through the Queue, and through a Stage committed after an event
	// queued before it, so that the staged spans move.
	for _, via := range []string{"queue", "stage"} {
		t.Run(via, func(t *testing.T) {
			var got []pair
			q := NewQueue(Func(func(o *Observation) { got = append(got, deep(o)) }))
			defer q.Close()
			var obs Observer = q
			commit, skipped := func() {}, 0
			if via == "stage" {
				before := Event{}
				before.Raw = []byte("before")
				q.Observe(&Observation{Kind: KindEvent, Event: &before, Fired: []faults.Firing{{Kind: "before"}}})
				s := q.stage()
				obs, commit, skipped = s, s.giveBack, 1
			}
			for _, c := range cases {
				o := c.O
				o.Event = &c.E
				in := deep(&o) // c's own bytes stay as they were
				o, o.Kind, o.Event = in.O, KindEvent, &in.E
				obs.Observe(&o)
				// The proxy reuses what it reported.
				for _, b := range [][]byte{in.E.Raw, in.E.Type, in.E.ID, in.E.Data, in.E.RPCMethod, in.E.RPCID, in.E.Delivered, in.E.DeliveredID} {
					clear(b)
				}
				clear(in.O.Fired)
			}
			commit()
			q.Drain()
			got = got[skipped:]
			if len(got) != len(cases) {
				t.Fatalf("the observer got %d events, want %d", len(got), len(cases))
			}
			for i, c := range cases {
				want := c
				want.O.Kind = KindEvent
				if !reflect.DeepEqual(got[i], want) {
					t.Errorf("%s: the observer got\n%+v\nwant\n%+v", names[i], got[i], want)
				}
			}
		})
	}
}

// TestQueueWaitsForItsGoroutine: an exchange that finds the batch full
// while the Queue's goroutine, busy passing the batch before it on, was
// woken to take this one waits for it to, rather than passing the batch
// on itself: the observer's work stays off the exchange's goroutine, which
// goes on once the goroutine has swapped the batches. Close lets a waiting
// exchange go too. Both through Observe and through a Stage.
func TestQueueWaitsForItsGoroutine(t *testing.T) {
	for _, tc := range []struct {
		name         string
		stage, close bool
	}{{"observe", false, false}, {"stage", true, false}, {"close", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			busy, release := make(chan struct{}), make(chan struct{})
			var mu sync.Mutex
			var lines []string
			offGoroutine := 0 // events passed on other than by the Queue's goroutine
			stack := make([]byte, 64<<10)
			first := true
			q := NewQueue(Func(func(o *Observation) {
				if first {
					first = false
					close(busy)
					<-release
				}
				byRun := bytes.Contains(stack[:runtime.Stack(stack, false)], []byte("observe.(*Queue).run("))
				mu.Lock()
				defer mu.Unlock()
				lines = append(lines, string(o.Event.Data))
				if !byRun {
					offGoroutine++
				}
			}))
			n := kickAt + queueEvents + 1
			done := make(chan struct{})
			go func() {
				defer close(done)
				fillPastTheBatch(q, tc.stage, busy, n)
			}()
			where := waitParked(t, done, "observe.fillPastTheBatch(")
			if !strings.Contains(where, "observe.(*Queue).roomFor(") {
				t.Fatalf("with the batch full and the Queue's goroutine on its way, the exchange did not wait for it:\n%s", where)
			}
			closed := make(chan struct{})
			if tc.close {
				go func() {
					defer close(closed)
					q.Close()
				}()
			}
			close(release)
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the exchange waiting for room never went on")
			}
			if tc.close {
				<-closed
			} else {
				q.Drain()
				defer q.Close()
			}
			mu.Lock()
			defer mu.Unlock()
			for i, l := range lines {
				if l != strconv.Itoa(i) {
					t.Fatalf("observation %d is event %s", i, l)
				}
			}
			switch {
			case !tc.close && len(lines) != n:
				t.Fatalf("the observer saw %d events, want %d", len(lines), n)
			case tc.close && len(lines) < n-1:
				t.Fatalf("the observer saw %d events, want the %d queued before Close", len(lines), n-1)
			case !tc.close && offGoroutine != 1:
				// The last event is passed on by the Drain above.
				t.Fatalf("%d events were passed on off the Queue's goroutine, want 1", offGoroutine)
			}
		})
	}
}

// fillPastTheBatch reports n events to q, directly or through a Stage:
// kickAt of them, which wake q's goroutine; once busy is closed (the
// goroutine is passing them on), a batch more, then one.
func fillPastTheBatch(q *Queue, stage bool, busy <-chan struct{}, n int) {
	var o Observer = q
	var s *Stage
	if stage {
		s = q.stage()
		o = s
	}
	buf := make([]byte, 0, 16)
	for i := range n {
		event(o, buf, 1, i, nil)
		if s != nil && (i == kickAt-1 || i == n-2 || i == n-1) {
			s.Commit()
		}
		if i == kickAt-1 {
			<-busy
		}
	}
	if s != nil {
		s.giveBack()
	}
}

// waitParked waits until the goroutine whose stack holds fn is parked,
// and returns its stack; it fails t if done closes first, or the
// goroutine does not park within ten seconds.
func waitParked(t *testing.T, done <-chan struct{}, fn string) string {
	t.Helper()
	buf := make([]byte, 1<<20)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			t.Fatal("the exchange went on without waiting")
		default:
		}
		for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			if strings.Contains(g, fn) && (strings.Contains(g, "[sync.Cond.Wait") || strings.Contains(g, "[sync.Mutex.Lock")) {
				return g
			}
		}
		runtime.Gosched()
	}
	t.Fatal("the exchange never waited")
	return ""
}

// runRecorder is a lineRecorder that also takes runs (RunObserver), and
// keeps the length of each.
type runRecorder struct {
	lineRecorder
	runs []int
}

func (r *runRecorder) ObserveRun(run []Observation) {
	r.runs = append(r.runs, len(run))
	for i := range run {
		r.lineRecorder.Observe(&run[i])
	}
}

// TestQueuePassesRuns: the Queue passes its queued events on in runs of
// at most runLen to an observer that takes runs, and one at a time to one
// that does not, both behind a Tee and in the same order: every event, in
// the order queued, with the bytes it was reported with, then what came
// after them.
func TestQueuePassesRuns(t *testing.T) {
	runs, ones := &runRecorder{}, &lineRecorder{}
	q := NewQueue(Tee(runs, ones))
	defer q.Close()
	buf := make([]byte, 0, 16)
	const n = 3*runLen + 5
	var want []string
	for i := range n {
		event(q, buf, 1, i, nil)
		want = append(want, fmt.Sprintf("1 event %d id=%d data=%d", i, i, i))
	}
	q.Observe(&Observation{Kind: KindRequest, Exchange: 2})
	want = append(want, "2 request 0")
	for name, got := range map[string][]string{"runs": runs.seen(), "one at a time": ones.seen()} {
		if !slices.Equal(got, want) {
			t.Errorf("%s: the observer saw %q, want %q", name, got, want)
		}
	}
	// The events in runs of at most runLen (a batch's events are passed
	// on when the Queue's goroutine takes it, so where one run ends
	// depends on when it did); the request, no queued event, alone.
	total, longest := 0, 0
	for _, l := range runs.runs {
		total, longest = total+l, max(longest, l)
	}
	if total != n || longest > runLen || longest < 2 {
		t.Errorf("runs of %v: %d events, the longest %d; want all %d in runs of at most %d, not one at a time", runs.runs, total, longest, n, runLen)
	}
}

// TestQueueNoAllocation: queueing an event, staging, committing and giving
// back a Stage as a stream does once per read, and queueing a chunk and
// passing its events on allocate nothing once the Queue has run.
func TestQueueNoAllocation(t *testing.T) {
	// Reused, as the proxy reuses its observation and event.
	var e Event
	o := &Observation{Kind: KindEvent, Exchange: 1, Event: &e, Fired: []faults.Firing{{Kind: "drop"}}}
	buf := make([]byte, 0, 16)
	n := 0
	next := func() {
		n++
		buf = strconv.AppendInt(buf[:0], int64(n), 10)
		e.Raw, e.ID, e.Data = buf, buf, buf
	}
	chunk := chunkObservation(1, chunkOfFive, 0, time.Second)
	for _, tc := range []struct {
		name string
		runs int
		run  func(q *Queue)
	}{
		{"an event", 2000, func(q *Queue) {
			next()
			q.Observe(o)
			if n%100 == 0 {
				q.Kick()
			}
		}},
		{"50 events through a Stage", 200, func(q *Queue) {
			s := q.stage()
			for range 50 {
				next()
				s.Observe(o)
			}
			s.giveBack()
			q.Kick()
		}},
		{"a chunk", 500, func(q *Queue) {
			q.ObserveChunk(chunk)
			q.Drain()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := NewQueue(Func(func(*Observation) {}))
			defer q.Close()
			if allocs := testing.AllocsPerRun(tc.runs, func() { tc.run(q) }); allocs != 0 {
				t.Fatalf("%s allocates %.2f times", tc.name, allocs)
			}
		})
	}
}

// TestQueueOneOrder: while one exchange's observation is still on its
// way through a Tee's observers behind a Queue (held in the second),
// another exchange's does not overtake it at the first: both observers see
// the two in one order. With Tee alone the second exchange's observation
// goes through both while the first waits, and the two observers disagree
// on the order.
func TestQueueOneOrder(t *testing.T) {
	inside, release := make(chan struct{}), make(chan struct{})
	first := &lineRecorder{}
	second := &lineRecorder{hold: func(o *Observation) {
		if o.Exchange == 1 {
			close(inside)
			<-release
		}
	}}
	s := NewQueue(Tee(first, second))
	defer s.Close()

	doneA := make(chan struct{})
	go func() {
		defer close(doneA)
		s.Observe(&Observation{Kind: KindRequest, Exchange: 1})
	}()
	<-inside
	doneB := make(chan struct{})
	go func() {
		defer close(doneB)
		s.Observe(&Observation{Kind: KindRequest, Exchange: 2})
	}()
	// Exchange 2 is given a bounded time to overtake exchange 1, which is
	// still inside the second observer: in one order it never does.
	select {
	case <-doneB:
		t.Error("exchange 2's observation went through while exchange 1's was still inside")
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	<-doneA
	<-doneB
	want := []string{"1 request 0", "2 request 0"}
	if got := first.seen(); !slices.Equal(got, want) {
		t.Errorf("the first observer saw %q, want %q", got, want)
	}
	if got := second.seen(); !slices.Equal(got, want) {
		t.Errorf("the second observer saw %q, want %q", got, want)
	}
}

// BenchmarkQueueEventCold measures what queueing one event costs the
// stream that reports it when the batch it is copied into is out of the
// nearer caches, as on a stream that waits between events (the paced
// regime of the proxy's BenchmarkStream): before each event it writes over
// coldSpan bytes, and every 32 events the batch is drained, on another
// goroutine, as the Queue's own does. It reports the median time of the
// queueing alone (cold-p50-ns); ns/op means nothing here.
//
//	go test -run XXX -bench BenchmarkQueueEventCold -benchtime 20000x ./proxy/observe/
func BenchmarkQueueEventCold(b *testing.B) {
	q := NewQueue(Func(func(*Observation) {}))
	defer q.Close()
	o := progressEvent()
	e := o.Event
	flood := make([]byte, coldSpan)
	took := make([]time.Duration, 0, b.N)
	drained := make(chan struct{})
	b.ResetTimer()
	for i := range b.N {
		for j := range flood {
			flood[j] = byte(i + j)
		}
		e.Index = i
		e.ID = strconv.AppendInt(e.ID[:0:0], int64(i), 10)
		start := time.Now()
		q.Observe(o)
		took = append(took, time.Since(start))
		if i%32 == 31 {
			go func() { q.Drain(); drained <- struct{}{} }()
			<-drained
		}
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "cold-p50-ns")
}

// coldSpan is what BenchmarkQueueEventCold writes between two events: more
// than the second-level caches hold.
const coldSpan = 4 << 20

// BenchmarkStageBurst measures what handing a read's burst of events to
// the Queue costs the stream, per event: each event staged as the proxy
// stages a progress notification delivered unchanged (its id and data
// parts of its raw bytes), the Stage committed every stageEvents events
// and given back at the end of the burst, as at a flush. The Queue's
// goroutine passes the events on meanwhile, on the other core.
//
//	go test -run XXX -bench BenchmarkStageBurst ./proxy/observe/
func BenchmarkStageBurst(b *testing.B) {
	q := NewQueue(Func(func(*Observation) {}))
	defer q.Close()
	o := progressEvent()
	e := o.Event
	e.DeliveredID, e.DeliveredHasID = e.ID, true
	const burst = 350 // the events of a 32 KiB read
	b.ResetTimer()
	for i := 0; i < b.N; {
		s := q.stage()
		for j := 0; j < burst && i < b.N; j, i = j+1, i+1 {
			e.Index = i
			s.Observe(o)
		}
		s.giveBack()
		q.Kick()
	}
}

// progressEvent is the observation of a progress notification as the
// proxy reports one delivered as it came: its id and data parts of its
// raw block, its method a part of its data.
func progressEvent() *Observation {
	raw := []byte(`id: 12345` + "\n" + `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"seq":12345,"t":123456789}}` + "\n\n")
	e := &Event{}
	e.Raw, e.Parsed, e.ID, e.HasID, e.Dispatched = raw, true, raw[4:9], true, true
	e.Data = raw[16 : len(raw)-2]
	e.RPCKind, e.RPCMethod = mcp.RPCNotification, e.Data[28:50]
	e.Fate, e.Copies = Delivered, 1
	return &Observation{Kind: KindEvent, Exchange: 1, Session: "s", SessionSeq: 1, Protocol: "2025-11-25", Event: e}
}
