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
