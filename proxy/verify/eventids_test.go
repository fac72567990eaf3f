package verify

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestEventIDsFollowTheRing: every event in a logical stream's ring
// gives back its own id, through many compactions of the arena, ids of
// every length, and a ring dropped and filled again; and a full ring
// allocates nothing more.
func TestEventIDsFollowTheRing(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	l := &logical{}
	want := map[int64]string{}      // by pos
	at := map[int64]time.Duration{} // by pos
	var pos int64
	add := func() {
		id := strconv.FormatInt(pos, 10) + strings.Repeat("x", rng.IntN(60))
		// Times of either sign, up to a century: a record keeps them whole.
		at[pos] = time.Duration(rng.Int64N(int64(100*365*24*time.Hour))) - time.Hour
		l.addEvent([]byte(id), pos, pos%3 != 0, at[pos])
		want[pos] = id
		pos++
	}
	check := func(step string) {
		t.Helper()
		if len(l.events) > idWindow {
			t.Fatalf("%s: %d events in the ring, bound %d", step, len(l.events), idWindow)
		}
		for i := range len(l.events) {
			e, p := &l.events[i], l.eventPos(i)
			if got := string(l.eventID(e)); got != want[p] {
				t.Fatalf("%s: slot %d (pos %d) gives id %q, want %q", step, i, p, got, want[p])
			}
			if e.at() != at[p] || e.dispatched() != (p%3 != 0) {
				t.Fatalf("%s: slot %d (pos %d) holds time %v, dispatched %v; want %v, %v", step, i, p, e.at(), e.dispatched(), at[p], p%3 != 0)
			}
		}
		if n := len(l.events); l.evFolded && n == idWindow {
			// The oldest slot holds the oldest event: the ring is in order.
			if first := l.eventPos(l.evNext); first != pos-idWindow {
				t.Fatalf("%s: oldest slot holds pos %d, want %d", step, first, pos-idWindow)
			}
		}
	}
	for round := range 3 {
		for i := range 3*idWindow + 17 {
			add()
			if i%509 == 0 || i > 3*idWindow {
				check("round " + strconv.Itoa(round) + ", event " + strconv.Itoa(i))
			}
		}
		l.dropEvents()
		for range 5 {
			add()
		}
		check("refilled after a drop")
		if c := cap(l.events); c > 8 {
			// A short stream (a POST's priming event and its answer) holds little.
			t.Fatalf("a stream of 5 events holds room for %d", c)
		}
	}
	id := make([]byte, 0, 64)
	allocs := testing.AllocsPerRun(2*idWindow, func() {
		id = strconv.AppendInt(append(id[:0], "ev-"...), pos, 10)
		l.addEvent(id, pos, true, 0)
		pos++
	})
	if allocs != 0 {
		t.Errorf("a full ring allocates %v times per event", allocs)
	}
}
