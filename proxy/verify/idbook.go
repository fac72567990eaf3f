package verify

// idBook is a session's two windows of event ids, kept in one table: the
// ids the upstream sent (each with its idRec) and the ids the client got
// (each with its deliveredRec). Each window remembers at most cap ids and
// forgets its oldest insertion first, exactly as two windows would; but an
// id in both, as is every event delivered with the id it was sent with,
// takes one entry, so that recording such an event looks up, enters and
// evicts one key where two windows would do each twice, and the second
// lookup finds what the first one just touched. An entry goes when
// neither window holds its id any more. Which windows hold an entry's id
// is kept apart from the entry (in), so that an eviction, once per event,
// reads no entry: in a full book the oldest entry is rarely in a cache.
//
// The zero value is not usable; see newIDBook. It is not safe for
// concurrent use.
type idBook struct {
	t idTable[idFacts]
	// in says, by entry, which windows hold its id (inUp, inDown); the
	// facts of a window that does not are stale.
	in []uint8
	// up and down list the entries in each window in insertion order.
	up, down idRing
}

// idFacts is what the book knows of one id.
type idFacts struct {
	up   idRec
	down deliveredRec
}

const (
	inUp uint8 = 1 << iota
	inDown
)

// idRing is one window's insertion order: once full, the oldest entry is
// at next.
type idRing struct {
	ents []int32
	next int
	cap  int
	// dropped counts ids forgotten to make room.
	dropped int
}

func newIDBook(cap int) *idBook {
	return &idBook{up: idRing{cap: cap}, down: idRing{cap: cap}}
}

// upstream returns the record of an id the upstream sent, whose idHash is
// h. The index i (-1 for none) names the id's entry, which may hold only
// the delivered fact; it stays valid for setUp until the book next changes.
func (b *idBook) upstream(k []byte, h uint64) (rec idRec, i int32, ok bool) {
	i = b.t.findH(k, h)
	if i < 0 || b.in[i]&inUp == 0 {
		return idRec{}, i, false
	}
	return b.t.ents[i].val.up, i, true
}

// upstreamString is upstream for a key held as a string.
func (b *idBook) upstreamString(k string) (idRec, bool) {
	rec, _, ok := b.upstream(bytesOf(k), idHash(bytesOf(k)))
	return rec, ok
}

// setUp records rec for k, whose idHash is h and whose entry upstream
// returned as i, and returns k's entry. An id new to the upstream window
// evicts the window's oldest once it is full.
func (b *idBook) setUp(i int32, k []byte, h uint64, rec idRec) int32 {
	if i >= 0 && b.in[i]&inUp != 0 {
		b.t.ents[i].val.up = rec
		return i
	}
	b.makeRoom(&b.up, inUp)
	if i < 0 {
		i = b.insert(k, h)
	}
	b.t.ents[i].val.up = rec
	b.in[i] |= inUp
	b.up.push(i)
	return i
}

// insert enters k, absent, with no fact, and returns its entry.
func (b *idBook) insert(k []byte, h uint64) int32 {
	i := b.t.insertH(k, h, idFacts{})
	if int(i) >= len(b.in) {
		b.in = append(b.in, make([]uint8, int(i)+1-len(b.in))...)
	}
	b.in[i] = 0
	return i
}

// refDelivered returns a pointer to the record of an id the client got,
// whose idHash is h, valid until the book next changes; an id new to the
// delivered window enters it with the zero record, evicting the window's
// oldest once it is full. found says whether it was there. hint is the
// entry k may have (as setUp returned it for the id the upstream sent,
// which the client mostly gets as it was sent), -1 for none: it is used
// when it holds k, and looked up otherwise.
func (b *idBook) refDelivered(k []byte, h uint64, hint int32) (rec *deliveredRec, found bool) {
	i := int32(-1)
	if hint >= 0 && int(hint) < len(b.in) && b.in[hint] != 0 && b.t.homes[hint] == uint32(h) && string(b.t.ents[hint].key()) == string(k) {
		i = hint
	}
	if i < 0 {
		i = b.t.findH(k, h)
	}
	if i >= 0 && b.in[i]&inDown != 0 {
		return &b.t.ents[i].val.down, true
	}
	b.makeRoom(&b.down, inDown)
	if i < 0 {
		i = b.insert(k, h)
	}
	f := &b.t.ents[i].val
	f.down = deliveredRec{}
	b.in[i] |= inDown
	b.down.push(i)
	return &f.down, false
}

// delivered returns the record of an id the client got.
func (b *idBook) delivered(k []byte) (deliveredRec, bool) {
	if i := b.t.find(k); i >= 0 && b.in[i]&inDown != 0 {
		return b.t.ents[i].val.down, true
	}
	return deliveredRec{}, false
}

// deliveredString is delivered for a key held as a string.
func (b *idBook) deliveredString(k string) (deliveredRec, bool) { return b.delivered(bytesOf(k)) }

// makeRoom forgets the oldest id of ring r (the window of fact, inUp or
// inDown) when r is full, and the id's entry when the other window does
// not hold it. Entries the ring does not name keep their index. The
// forgotten facts stay in the entry, stale, until it is used again.
func (b *idBook) makeRoom(r *idRing, fact uint8) {
	if len(r.ents) < r.cap {
		return
	}
	oi := r.ents[r.next]
	if b.in[oi] &^= fact; b.in[oi] == 0 {
		b.t.remove(oi)
	}
	r.dropped++
}

// push enters entry i as the ring's newest, in the place makeRoom emptied
// when the ring is full.
func (r *idRing) push(i int32) {
	if len(r.ents) < r.cap {
		r.ents = append(r.ents, i)
		return
	}
	r.ents[r.next] = i
	if r.next++; r.next == r.cap {
		r.next = 0
	}
}

// len returns how many ids the ring's window holds.
func (r *idRing) len() int { return len(r.ents) }
