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
