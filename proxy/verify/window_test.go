package verify

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

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
