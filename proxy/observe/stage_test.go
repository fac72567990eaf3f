package observe

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/frayproxy/fray/faults"
)

// TestStageOrder: staged events reach nothing until committed; an
// observation other than an event, given to the Stage, comes after the
// events staged before it; and each Stage's events keep their order among
// what other exchanges reported meanwhile.
func TestStageOrder(t *testing.T) {
	q, rec := recordingQueue(t)
	buf := make([]byte, 0, 16)
	s1, s2 := q.stage(), q.stage()
	event(s1, buf, 1, 1, nil)
	event(s2, buf, 2, 1, nil)
	event(s1, buf, 1, 2, []faults.Firing{{Kind: "drop"}})
	q.Drain()
	if got := rec.seen(); len(got) != 0 {
		t.Fatalf("staged events reached the observer before they were committed: %q", got)
	}
	q.Observe(&Observation{Kind: KindRequest, Exchange: 3})
	s1.Observe(&Observation{Kind: KindEnd, Exchange: 1})
	event(s1, buf, 1, 3, nil)
	s2.giveBack()
	s1.giveBack()
	q.Drain()
	want := []string{
		"3 request 0",
		"1 event 1 id=1 data=1", "1 event 2 id=2 data=2 fired=drop", "1 end",
		"2 event 1 id=1 data=1",
		"1 event 3 id=3 data=3",
	}
	if got := rec.seen(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("observer saw\n%q\nwant\n%q", got, want)
	}
}

// TestStageBounds: a burst larger than a Stage holds is committed in
// parts, a Queue whose batch has no room for a commit passes that batch on
// in the committing goroutine, and an event larger than a Stage holds
// goes on directly after the events staged before it: every event arrives,
// once, in order.
func TestStageBounds(t *testing.T) {
	rec := &lineRecorder{}
	q := NewQueue(rec)
	// With no goroutine of the Queue's own, only a commit that finds no
	// room passes the batch on: the bounds decide, not the timing.
	q.started = true
	defer func() {
		q.started = false
		q.Close()
	}()
	buf := make([]byte, 0, 16)
	s := q.stage()
	n := 3*queueEvents + 5
	for i := range n {
		event(s, buf, 1, i, nil)
	}
	big := Event{}
	big.Raw = bytes.Repeat([]byte("x"), stageBytes+1)
	s.Observe(&Observation{Kind: KindEvent, Exchange: 1, Event: &big})
	event(s, buf, 1, n, nil)
	// More firings than a Stage holds, on one event.
	fired := make([]faults.Firing, stageFired+1)
	for i := range fired {
		fired[i].Kind = "f"
	}
	event(s, buf, 1, n+1, fired)
	s.giveBack()
	q.Drain()
	got := rec.seen()
	if len(got) != n+3 {
		t.Fatalf("observer saw %d observations, want %d", len(got), n+3)
	}
	inOrder(t, got, n, stageBytes)
	if want := fmt.Sprintf("1 event %d id=%d data=%d", n+1, n+1, n+1); !bytes.HasPrefix([]byte(got[n+2]), []byte(want)) ||
		bytes.Count([]byte(got[n+2]), []byte("fired=f")) != stageFired+1 {
		t.Fatalf("the event with %d firings came as %.80q", stageFired+1, got[n+2])
	}
}

// TestStageClosedQueue: events committed to a closed Queue are dropped,
// as what is observed after Close is.
func TestStageClosedQueue(t *testing.T) {
	rec := &lineRecorder{}
	q := NewQueue(rec)
	buf := make([]byte, 0, 16)
	s := q.stage()
	event(s, buf, 1, 1, nil)
	q.Close()
	event(s, buf, 1, 2, nil)
	s.giveBack()
	q.Drain()
	if got := rec.seen(); len(got) != 0 {
		t.Fatalf("a closed Queue passed on %q", got)
	}
}

// TestStageClassifies: a commit that leaves classifyBelow events waiting
// behind a busy goroutine hands classification back to the exchanges, as
// queueing them one by one does.
func TestStageClassifies(t *testing.T) {
	q, free := heldQueue(t)
	buf := make([]byte, 0, 16)
	s := q.stage()
	for i := range classifyBelow - 1 {
		event(s, buf, 1, i+1, nil)
		if i%stageEvents == stageEvents-1 {
			s.Commit()
		}
	}
	s.Commit()
	if !q.Classifies() {
		t.Fatalf("with %d events waiting the Queue does not classify", classifyBelow-1)
	}
	event(s, buf, 1, classifyBelow, nil)
	if !q.Classifies() {
		t.Fatal("an event staged, not committed, counted as waiting")
	}
	s.giveBack()
	if q.Classifies() {
		t.Fatalf("with %d events committed behind a busy goroutine the Queue still classifies", classifyBelow)
	}
	free()
	q.Drain()
	if !q.Classifies() {
		t.Fatal("once drained the Queue does not classify")
	}
}

// TestStageLent: a Queue lends at most maxStages Stages at once, says so
// with nil rather than make more, and lends again the last one given back.
func TestStageLent(t *testing.T) {
	q := NewQueue(Func(func(*Observation) {}))
	defer q.Close()
	var lent []*Stage
	for range maxStages {
		s := q.stage()
		if s == nil {
			t.Fatalf("the Queue lent %d Stages, want %d", len(lent), maxStages)
		}
		lent = append(lent, s)
	}
	if s := q.stage(); s != nil {
		t.Fatalf("the Queue lent a Stage past its %d", maxStages)
	}
	last := lent[3]
	last.giveBack()
	if s := q.stage(); s != last {
		t.Fatal("the Queue did not lend again the Stage given back")
	}
}

// dataNoter returns an observer that notes the data of each event
// it gets.
func dataNoter() (Observer, *[]string) {
	got := new([]string)
	return Func(func(o *Observation) { *got = append(*got, string(o.Event.Data)) }), got
}

// emitData reports an event whose data is data through s.
func emitData(s Stream, data string) {
	ev := Event{}
	ev.Raw, ev.Data = []byte("data: "+data+"\n\n"), []byte(data)
	s.Observe(&Observation{Kind: KindEvent, Event: &ev})
}

// TestALoneEventTakesNoStage: on a Queue's stream, the first event since
// the stream last flushed goes to the queue directly; only the events of a
// burst after it take a Stage, one for the burst, and the observer gets
// them all in order.
func TestALoneEventTakesNoStage(t *testing.T) {
	ob, got := dataNoter()
	q := NewQueue(ob)
	t.Cleanup(q.Close)
	s := q.Stream().(*queueStream)
	var first *Stage
	for i, staged := range []bool{false, false, true, true, true} {
		if i == 1 {
			// A lone event, then a burst.
			s.Flush()
		}
		emitData(s, strconv.Itoa(i))
		if (s.stage != nil) != staged {
			t.Fatalf("after event %d the stream holds a Stage: %v, want %v", i, s.stage != nil, staged)
		}
		if first == nil {
			first = s.stage
		} else if s.stage != first {
			t.Fatalf("event %d took another Stage than the burst's first", i)
		}
	}
	s.Flush()
	q.Drain()
	if want := []string{"0", "1", "2", "3", "4"}; !slices.Equal(*got, want) {
		t.Fatalf("the observer got %q, want %q", *got, want)
	}
}

// TestEventsWithNoStageToLend: when the queue has no Stage to lend, a
// stream reports its events one by one, and the observer gets them all.
func TestEventsWithNoStageToLend(t *testing.T) {
	ob, got := dataNoter()
	q := NewQueue(ob)
	t.Cleanup(q.Close)
	for range maxStages {
		q.stage()
	}
	if q.stage() != nil {
		t.Fatalf("the queue lent more than %d Stages", maxStages)
	}
	s := q.Stream()
	for i := range 3 {
		emitData(s, strconv.Itoa(i))
	}
	s.Flush()
	q.Drain()
	if want := []string{"0", "1", "2"}; !slices.Equal(*got, want) {
		t.Fatalf("the observer got %q, want %q", *got, want)
	}
}
