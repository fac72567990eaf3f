package verify

// window is a map from K to V that keeps at most cap keys, forgetting the
// oldest insertion first: the ledger's bound on the ids it remembers. The
// zero value is not usable; see newWindow. It is not safe for concurrent
// use.
type window[K comparable, V any] struct {
	m     map[K]V
	order []K // the keys in insertion order; once full, the oldest at next
	next  int
	cap   int
	// dropped counts keys forgotten to make room.
	dropped int
}

func newWindow[K comparable, V any](cap int) *window[K, V] {
	return &window[K, V]{m: make(map[K]V), cap: cap}
}

func (w *window[K, V]) get(k K) (V, bool) {
	v, ok := w.m[k]
	return v, ok
}

// put sets k to v. A new key past the bound evicts the oldest one.
func (w *window[K, V]) put(k K, v V) {
	if _, ok := w.m[k]; !ok {
		if len(w.order) < w.cap {
			w.order = append(w.order, k)
		} else {
			delete(w.m, w.order[w.next])
			w.order[w.next] = k
			w.next = (w.next + 1) % w.cap
			w.dropped++
		}
	}
	w.m[k] = v
}

// getBytes is get for a key held as bytes, with no string made of them.
func getBytes[V any](w *window[string, V], k []byte) (V, bool) {
	v, ok := w.m[string(k)]
	return v, ok
}
