package verify

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestIDTableRemovesLazily: a table whose removals leave stale slots
// behaves as a map through keys removed and entered again in any order
// (the same key often into the entry it just left), entered where a
// lookup found room for them with keys removed between the two, and its
// slots never fill. (TestIDBookMatchesTwoWindows checks that a full book
// allocates nothing.)
func TestIDTableRemovesLazily(t *testing.T) {
	var tb idTable
	ref := map[string]int32{} // key to entry
	rng := rand.New(rand.NewPCG(11, 12))
	key := func() []byte { return []byte(strconv.Itoa(rng.IntN(500)) + string(make([]byte, rng.IntN(30)))) }
	removeSome := func(skip string) {
		for k, e := range ref {
			if rng.IntN(4) == 0 {
				return
			}
			if k != skip {
				tb.remove(e)
				delete(ref, k)
			}
		}
	}
	step := func(i int) {
		k := key()
		e, ok := ref[string(k)]
		switch {
		case ok && rng.IntN(2) == 0:
			tb.remove(e)
			delete(ref, string(k))
		case !ok && rng.IntN(2) == 0:
			ref[string(k)] = tb.insertAt(k, idHash(k), -1, 1)
		case !ok:
			h := idHash(k)
			at := tb.spotH(k, h)
			if at.ent >= 0 {
				t.Fatalf("step %d: spot %q found entry %d of a key not held", i, k, at.ent)
			}
			removeSome(string(k))
			ref[string(k)] = tb.insertAt(k, h, at.slot, 1)
		}
		probe := key()
		e, ok = ref[string(probe)]
		if got := tb.find(probe, idHash(probe)); ok != (got >= 0) || ok && got != e {
			t.Fatalf("step %d: find %q = %d, want %d (present %v)", i, probe, got, e, ok)
		}
		if got := tb.spotH(probe, idHash(probe)); ok != (got.ent >= 0) || ok && got.ent != e {
			t.Fatalf("step %d: spot %q = %d, want %d (present %v)", i, probe, got.ent, e, ok)
		}
		if tb.len() != len(ref) || tb.used*2 > len(tb.slots) {
			t.Fatalf("step %d: %d keys in %d slots (%d taken), want %d keys and at most half taken", i, tb.len(), len(tb.slots), tb.used, len(ref))
		}
	}
	for i := range 100000 {
		step(i)
	}
	n := 0
	for i, m := range tb.marks {
		if m == 0 {
			continue
		}
		n++
		if k := tb.ents[i].key(); ref[string(k)] != int32(i) {
			t.Errorf("entry %d holds %q, which is not held there", i, k)
		}
	}
	if n != len(ref) {
		t.Errorf("%d entries in use, want %d", n, len(ref))
	}
}
