package verify

// window is a map from ids to V that keeps at most cap keys, forgetting
// the oldest insertion first: the ledger's bound on ids per session. The
// zero value is not usable; see newWindow. It is not safe for concurrent
// use.
type window[V any] struct {
	m     map[string]V
	order []string // the keys in insertion order; once full, the oldest at next
	next  int
	cap   int
}

func newWindow[V any](cap int) *window[V] {
	return &window[V]{m: make(map[string]V), cap: cap}
}

func (w *window[V]) get(k string) (V, bool) {
	v, ok := w.m[k]
	return v, ok
}

// getBytes is get for the bytes of a key.
func (w *window[V]) getBytes(k []byte) (V, bool) {
	v, ok := w.m[string(k)]
	return v, ok
}

// put sets k to v. A new key past the bound evicts the oldest one.
func (w *window[V]) put(k string, v V) {
	if _, ok := w.m[k]; !ok {
		if len(w.order) < w.cap {
			w.order = append(w.order, k)
		} else {
			delete(w.m, w.order[w.next])
			w.order[w.next] = k
			w.next = (w.next + 1) % w.cap
		}
	}
	w.m[k] = v
}

func (w *window[V]) len() int { return len(w.m) }
