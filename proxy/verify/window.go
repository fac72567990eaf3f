package verify

// window is a map that keeps at most cap keys, forgetting the oldest
// insertion first: the ledger's bound on ids per session. The zero value
// is not usable; see newWindow.
type window[V any] struct {
	m    map[string]V
	ring []string
	next int
	cap  int
	// dropped counts keys forgotten to make room.
	dropped int
}

func newWindow[V any](cap int) *window[V] {
	return &window[V]{m: make(map[string]V), cap: cap}
}

func (w *window[V]) get(k string) (V, bool) {
	v, ok := w.m[k]
	return v, ok
}

// put sets k to v. A new key past the bound evicts the oldest one, which
// it returns with evicted true.
func (w *window[V]) put(k string, v V) (oldKey string, oldVal V, evicted bool) {
	if _, ok := w.m[k]; ok {
		w.m[k] = v
		return "", oldVal, false
	}
	w.m[k] = v
	if len(w.ring) < w.cap {
		w.ring = append(w.ring, k)
		return "", oldVal, false
	}
	oldKey = w.ring[w.next]
	oldVal, evicted = w.m[oldKey]
	delete(w.m, oldKey)
	w.ring[w.next] = k
	w.next = (w.next + 1) % w.cap
	w.dropped++
	return oldKey, oldVal, evicted
}

func (w *window[V]) len() int { return len(w.m) }

// each calls fn for every key held.
func (w *window[V]) each(fn func(k string, v V)) {
	for k, v := range w.m {
		fn(k, v)
	}
}
