package observe

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// recorder notes the exchanges of what it observes, in the order it is
// done with them; hold, when set, is called first, with the observation.
type recorder struct {
	mu   sync.Mutex
	seen []uint64
	hold func(o *Observation)
}

func (r *recorder) Observe(o *Observation) {
	if r.hold != nil {
		r.hold(o)
	}
	r.mu.Lock()
	r.seen = append(r.seen, o.Exchange)
	r.mu.Unlock()
}

func (r *recorder) order() []uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen)
}

// TestQueueOneOrder: while one exchange's observation is still on its
// way through a Tee's observers behind a Queue (held in the second),
// another exchange's does not overtake it at the first: both observers see
// the two in one order. With Tee alone the second exchange's observation
// goes through both while the first waits, and the two observers disagree
// on the order.
func TestQueueOneOrder(t *testing.T) {
	inside, release := make(chan struct{}), make(chan struct{})
	first := &recorder{}
	second := &recorder{hold: func(o *Observation) {
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
	want := []uint64{1, 2}
	if got := first.order(); !slices.Equal(got, want) {
		t.Errorf("the first observer saw exchanges %v, want %v", got, want)
	}
	if got := second.order(); !slices.Equal(got, want) {
		t.Errorf("the second observer saw exchanges %v, want %v", got, want)
	}
}
