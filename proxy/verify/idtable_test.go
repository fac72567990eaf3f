package verify

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/frayproxy/fray/proxy/observe"
)

// TestWindowMatchesMap: a window behaves as a map that forgets its oldest
// insertion past its bound, through many evictions and key lengths, and a
// full window allocates nothing more.
func TestWindowMatchesMap(t *testing.T) {
	const bound = 64
	w := newWindow[int](bound)
	ref := map[string]int{}
	var order []string
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		k := strconv.Itoa(rng.IntN(300)) + string(make([]byte, rng.IntN(40)))
		old, _, evicted := w.put(k, i)
		if _, ok := ref[k]; !ok {
			order = append(order, k)
			if len(order) > bound {
				want := order[0]
				order = order[1:]
				if !evicted || string(old) != want {
					t.Fatalf("put %d: evicted %q (%v), want %q", i, old, evicted, want)
				}
				delete(ref, want)
			}
		}
		ref[k] = i
		if w.len() != len(ref) {
			t.Fatalf("put %d: len %d, want %d", i, w.len(), len(ref))
		}
		probe := strconv.Itoa(rng.IntN(300)) + string(make([]byte, rng.IntN(40)))
		got, ok := w.get(probe)
		if want, wok := ref[probe]; ok != wok || got != want {
			t.Fatalf("get %q = %d, %v; want %d, %v", probe, got, ok, want, wok)
		}
	}
	n := 0
	w.each(func(k []byte, v int) {
		n++
		if ref[string(k)] != v {
			t.Errorf("each: %q = %d, want %d", k, v, ref[string(k)])
		}
	})
	if n != len(ref) {
		t.Errorf("each saw %d keys, want %d", n, len(ref))
	}
	key := make([]byte, 0, 32)
	seq := 0
	allocs := testing.AllocsPerRun(1000, func() {
		seq++
		key = strconv.AppendInt(append(key[:0], "id-"...), int64(seq), 10)
		w.putBytes(key, seq)
	})
	if allocs != 0 {
		t.Errorf("a full window allocates %v times per put", allocs)
	}
}

// TestEventHash: the hash of an event's joined data equals the hash of
// its raw block, whatever its line ends and data lines, so a corrupted
// event (hashed from its block) and its replay (from its data) agree.
func TestEventHash(t *testing.T) {
	for _, tt := range []struct{ raw, data string }{
		{"id: 1\ndata: {\"a\":1}\n\n", `{"a":1}`},
		{"data:x\r\ndata: y\r\nid: 2\r\n\r\n", "x\ny"},
		{"data\rdata:  z\r\r", "\n z"},
		{"\xef\xbb\xbfdata: bom\n\n", "bom"},
		{": comment\nid: 3\n\n", ""},
		{"data:\ndata:\n\n", "\n"},
	} {
		live := eventHash(hashEvent(tt.data, "", false))
		raw := eventHash(hashEvent("rewritten", tt.raw, true))
		if live != raw {
			t.Errorf("%q: the hash of its data %q and of its block differ", tt.raw, tt.data)
		}
	}
	if eventHash(hashEvent("a", "", false)) == eventHash(hashEvent("b", "", false)) {
		t.Error("different data, same hash")
	}
}

func hashEvent(data, raw string, corrupted bool) *observe.Event {
	e := &observe.Event{Corrupted: corrupted}
	e.Data, e.Raw = []byte(data), []byte(raw)
	return e
}

// TestIDTableRemovesLazily: a table whose removals leave stale slots
// behaves as a map through keys removed and entered again in any order
// (the same key often into the entry it just left), entered where a
// lookup found room for them with keys removed between the two, and its
// slots never fill. (TestWindowMatchesMap and TestIDBookMatchesTwoWindows
// check that a full window allocates nothing.)
func TestIDTableRemovesLazily(t *testing.T) {
	var tb idTable[int]
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
			ref[string(k)] = tb.insert(k, i)
		case !ok:
			h := idHash(k)
			at := tb.spotH(k, h)
			if at.ent >= 0 {
				t.Fatalf("step %d: spot %q found entry %d of a key not held", i, k, at.ent)
			}
			removeSome(string(k))
			ref[string(k)] = tb.insertAt(k, h, at.slot, 1)
			tb.ents[ref[string(k)]].val = i
		}
		probe := key()
		e, ok = ref[string(probe)]
		if got := tb.find(probe); ok != (got >= 0) || ok && got != e {
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
	tb.each(func(k []byte, v int) {
		n++
		if _, ok := ref[string(k)]; !ok {
			t.Errorf("each: %q is not held", k)
		}
	})
	if n != len(ref) {
		t.Errorf("each saw %d keys, want %d", n, len(ref))
	}
}
