package verify

import (
	"math/bits"
	"testing"
)

// TestEvRingNeverMoves: filling a ring to idWindow keeps every record where
// it was entered (no copy, unlike a slice grown by append), each slot holds
// what was written to it, the ring holds exactly idWindow records in a
// chunk per doubling after the first, and it allocates nothing per record.
func TestEvRingNeverMoves(t *testing.T) {
	var r evRing
	first := make([]*evRec, 0, idWindow)
	for i := range idWindow {
		if got := r.add(); got != i {
			t.Fatalf("add %d returned slot %d", i, got)
		}
		e := r.at(i)
		e.atd = int64(i)
		first = append(first, e)
	}
	for i := range idWindow {
		if e := r.at(i); e != first[i] || e.atd != int64(i) {
			t.Fatalf("slot %d moved or lost its record: it holds %d", i, e.atd)
		}
	}
	held := 0
	for _, c := range r.chunks {
		held += len(c)
	}
	if want := bits.Len(idWindow / evFirst); len(r.chunks) != want || held != idWindow || len(r.chunks[0]) != evFirst {
		t.Errorf("%d chunks holding %d records, the first %d; want %d holding %d, the first %d",
			len(r.chunks), held, len(r.chunks[0]), want, idWindow, evFirst)
	}
	allocs := testing.AllocsPerRun(10, func() {
		var r evRing
		for range idWindow {
			r.add()
		}
	})
	// A chunk per doubling and the chunk list's own growth.
	if want := float64(2 * bits.Len(idWindow/evFirst)); allocs > want {
		t.Errorf("%.0f allocations for %d records, want at most %.0f", allocs, idWindow, want)
	}
}

// TestEvRingSmallStream: a stream with a few events holds one small chunk.
func TestEvRingSmallStream(t *testing.T) {
	var r evRing
	r.add()
	r.add()
	if len(r.chunks) != 1 || len(r.chunks[0]) != evFirst {
		t.Errorf("two records: %d chunks, the first of %d; want one of %d", len(r.chunks), len(r.chunks[0]), evFirst)
	}
}
