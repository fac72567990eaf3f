package verify

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// fifoModel is a window as a map that forgets its oldest insertion past
// its bound: what each of an idBook's two windows must behave as.
type fifoModel struct {
	m     map[string]int64
	order []string
	bound int
	drops int
}

func (f *fifoModel) put(k string, v int64) {
	if _, ok := f.m[k]; !ok {
		f.order = append(f.order, k)
		if len(f.order) > f.bound {
			delete(f.m, f.order[0])
			f.order = f.order[1:]
			f.drops++
		}
	}
	f.m[k] = v
}

// TestIDBookMatchesTwoWindows: the upstream and delivered windows of one
// book behave as two independent bounded windows, through ids in one of
// them only, ids in both, ids entered again after one window forgot them,
// and keys short and long; and a full book allocates nothing more.
func TestIDBookMatchesTwoWindows(t *testing.T) {
	const bound = 64
	b := newIDBook(bound)
	up := &fifoModel{m: map[string]int64{}, bound: bound}
	down := &fifoModel{m: map[string]int64{}, bound: bound}
	rng := rand.New(rand.NewPCG(3, 4))
	key := func() string { return strconv.Itoa(rng.IntN(200)) + string(make([]byte, rng.IntN(40))) }
	for i := range int64(40000) {
		k := key()
		entry := int32(-1) // k's entry, when known
		switch rng.IntN(3) {
		case 0, 1: // the upstream sent k; mostly delivered as sent
			kb := []byte(k)
			h := idHash(kb)
			_, at, _ := b.lookUp(kb, h)
			entry = b.setUp(at, kb, h, idRec{pos: i})
			up.put(k, i)
			if rng.IntN(4) == 0 {
				break
			}
			fallthrough
		case 2: // the client got k
			if entry < 0 && rng.IntN(2) == 0 {
				entry = b.t.find([]byte(k), idHash([]byte(k)))
			} else if rng.IntN(2) == 0 {
				entry = -1
			}
			rec, found := b.refDelivered([]byte(k), idHash([]byte(k)), entry, nil)
			if _, ok := down.m[k]; found != ok {
				t.Fatalf("step %d: delivered %q found %v, want %v", i, k, found, ok)
			}
			rec.also = nil
			rec.rewritten = i%2 == 0
			down.put(k, i)
		}
		probe := key()
		rec, ok := b.upstreamString(probe)
		if want, wok := up.m[probe]; ok != wok || ok && rec.pos != want {
			t.Fatalf("step %d: upstream %q = %d, %v; want %d, %v", i, probe, rec.pos, ok, want, wok)
		}
		d, ok := b.deliveredString(probe)
		if want, wok := down.m[probe]; ok != wok || ok && d.rewritten != (want%2 == 0) {
			t.Fatalf("step %d: delivered %q = %+v, %v; want %v", i, probe, d, ok, wok)
		}
		if b.up.len() != len(up.m) || b.down.len() != len(down.m) {
			t.Fatalf("step %d: windows hold %d and %d ids, want %d and %d", i, b.up.len(), b.down.len(), len(up.m), len(down.m))
		}
	}
	if b.up.dropped != up.drops || b.down.dropped != down.drops {
		t.Errorf("dropped %d and %d, want %d and %d", b.up.dropped, b.down.dropped, up.drops, down.drops)
	}
	if n := b.t.len(); n > 2*bound {
		t.Errorf("the table holds %d entries for two windows of %d", n, bound)
	}
	k := make([]byte, 0, 32)
	seq := 0
	allocs := testing.AllocsPerRun(1000, func() {
		seq++
		k = strconv.AppendInt(append(k[:0], "ev-"...), int64(seq), 10)
		h := idHash(k)
		_, at, _ := b.lookUp(k, h)
		b.refDelivered(k, h, b.setUp(at, k, h, idRec{pos: int64(seq)}), nil)
	})
	if allocs != 0 {
		t.Errorf("a full book allocates %v times per event", allocs)
	}
}

// TestWindowMatchesMap: a window behaves as a map that forgets its oldest
// insertion past its bound, through many evictions and key lengths, and a
// full window allocates nothing more.
func TestWindowMatchesMap(t *testing.T) {
	const bound = 64
	w := newWindow[string, int64](bound)
	ref := &fifoModel{m: map[string]int64{}, bound: bound}
	rng := rand.New(rand.NewPCG(1, 2))
	key := func() string { return strconv.Itoa(rng.IntN(300)) + string(make([]byte, rng.IntN(40))) }
	for i := range int64(20000) {
		k := key()
		w.put(k, i)
		ref.put(k, i)
		if len(w.m) != len(ref.m) {
			t.Fatalf("put %d: len %d, want %d", i, len(w.m), len(ref.m))
		}
		probe := key()
		got, ok := w.get(probe)
		if want, wok := ref.m[probe]; ok != wok || got != want {
			t.Fatalf("get %q = %d, %v; want %d, %v", probe, got, ok, want, wok)
		}
		if got2, ok2 := getBytes(w, []byte(probe)); got2 != got || ok2 != ok {
			t.Fatalf("getBytes %q = %d, %v; get gave %d, %v", probe, got2, ok2, got, ok)
		}
	}
	if w.dropped != ref.drops {
		t.Errorf("dropped %d, want %d", w.dropped, ref.drops)
	}
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = "id-" + strconv.Itoa(i)
	}
	seq := 0
	allocs := testing.AllocsPerRun(len(keys)-1, func() {
		w.put(keys[seq], int64(seq))
		seq++
	})
	if allocs != 0 {
		t.Errorf("a full window allocates %v times per put", allocs)
	}
}

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
