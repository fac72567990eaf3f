package verify

// window is a map from ids to V that keeps at most cap keys, forgetting
// the oldest insertion first: the ledger's bound on ids per session. Once
// full, each new key takes the place, and the key storage, of the one it
// evicts, so a full window allocates nothing. The zero value is not
// usable; see newWindow. It is not safe for concurrent use.
type window[V any] struct {
	t    idTable[V]
	ring []int32 // entries in insertion order; once full, the oldest at next
	next int
	cap  int
	old  []byte // the key put evicted last
	// dropped counts keys forgotten to make room.
	dropped int
}

func newWindow[V any](cap int) *window[V] {
	return &window[V]{cap: cap}
}

func (w *window[V]) get(k string) (V, bool) { return w.t.get(bytesOf(k)) }

// getBytes is get for the bytes of a key.
func (w *window[V]) getBytes(k []byte) (V, bool) { return w.getH(k, idHash(k)) }

// getH is getBytes for k whose idHash is h.
func (w *window[V]) getH(k []byte, h uint64) (V, bool) {
	if i := w.t.findH(k, h); i >= 0 {
		return w.t.ents[i].val, true
	}
	var zero V
	return zero, false
}

// put sets k to v. A new key past the bound evicts the oldest one, which
// it returns with evicted true; oldKey is valid until the next put.
func (w *window[V]) put(k string, v V) (oldKey []byte, oldVal V, evicted bool) {
	return w.putBytes(bytesOf(k), v)
}

// putBytes is put for the bytes of a key, which it copies.
func (w *window[V]) putBytes(k []byte, v V) (oldKey []byte, oldVal V, evicted bool) {
	return w.putH(k, idHash(k), v)
}

// putH is putBytes for k whose idHash is h.
func (w *window[V]) putH(k []byte, h uint64, v V) (oldKey []byte, oldVal V, evicted bool) {
	if i := w.t.findH(k, h); i >= 0 {
		w.t.ents[i].val = v
		return nil, oldVal, false
	}
	return w.putNewH(k, h, v)
}

// putNewH is putH for a key known to be absent.
func (w *window[V]) putNewH(k []byte, h uint64, v V) (oldKey []byte, oldVal V, evicted bool) {
	_, oldKey, oldVal, evicted = w.add(k, h, v)
	return oldKey, oldVal, evicted
}

// add enters k, known to be absent, and returns its entry.
func (w *window[V]) add(k []byte, h uint64, v V) (i int32, oldKey []byte, oldVal V, evicted bool) {
	if len(w.ring) < w.cap {
		i = w.t.insertH(k, h, v)
		w.ring = append(w.ring, i)
		return i, nil, oldVal, false
	}
	oi := w.ring[w.next]
	w.old = append(w.old[:0], w.t.ents[oi].key()...)
	oldVal = w.t.ents[oi].val
	w.t.remove(oi)
	i = w.t.insertH(k, h, v)
	w.ring[w.next] = i
	w.next = (w.next + 1) % w.cap
	w.dropped++
	return i, w.old, oldVal, true
}

func (w *window[V]) len() int { return w.t.len() }

// each calls fn for every key held.
func (w *window[V]) each(fn func(k []byte, v V)) { w.t.each(fn) }
