package verify

// idBook is a session's two windows of event ids, kept in one table: the
// ids the upstream sent (each with its idRec) and the ids the client got
// (each with its deliveredRec). Each window remembers at most cap ids and
// forgets its oldest insertion first, exactly as two windows would; but an
// id in both, as is every event delivered with the id it was sent with,
// takes one entry, so that recording such an event looks up, enters and
// evicts one key where two windows would do each twice: the client's
// window takes the entry the upstream's just found or made, with no
// second lookup. An entry goes when neither window holds its id any more.
// Which windows hold an entry's id is the table's mark of the entry, a
// byte kept apart from the entry, so that an eviction, once per event,
// reads no entry: in a full book the oldest entry is rarely in a cache.
//
// The zero value is not usable; see newIDBook. It is not safe for
// concurrent use.
type idBook struct {
	// t marks each entry with the windows that hold its id (inUp,
	// inDown); the facts of a window that does not are stale.
	t idTable
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
// h.
func (b *idBook) upstream(k []byte, h uint64) (idRec, bool) {
	if i := b.t.find(k, h); i >= 0 && b.t.marks[i]&inUp != 0 {
		return b.t.ents[i].val.up, true
	}
	return idRec{}, false
}

// holdsUp reports whether the upstream window holds k.
func (b *idBook) holdsUp(k string) bool {
	_, ok := b.upstreamString(k)
	return ok
}

// upstreamString is upstream for a key held as a string.
func (b *idBook) upstreamString(k string) (idRec, bool) {
	return b.upstream(bytesOf(k), idHash(bytesOf(k)))
}

// lookUp is upstream for an id that setUp may record next: at says where
// the id is in the table (its entry may hold only the delivered fact) or
// would go, and stays valid for setUp until the book next changes.
func (b *idBook) lookUp(k []byte, h uint64) (rec idRec, at idSpot, ok bool) {
	at = b.t.spotH(k, h)
	if at.ent < 0 || b.t.marks[at.ent]&inUp == 0 {
		return idRec{}, at, false
	}
	return b.t.ents[at.ent].val.up, at, true
}

// setUp records rec for k, whose idHash is h and whose place lookUp
// returned as at, and returns k's entry. An id new to the upstream window
// evicts the window's oldest once it is full.
func (b *idBook) setUp(at idSpot, k []byte, h uint64, rec idRec) int32 {
	i := at.ent
	if i >= 0 && b.t.marks[i]&inUp != 0 {
		b.t.ents[i].val.up = rec
		return i
	}
	b.makeRoom(&b.up, inUp)
	if i < 0 {
		// The delivered fact a new entry's last id left is cleared with
		// it, so that no entry holds on to streams it no longer names.
		i = b.t.insertAt(k, h, at.slot, inUp)
		b.t.ents[i].val = idFacts{up: rec}
	} else {
		b.t.ents[i].val.up = rec
		b.t.marks[i] |= inUp
	}
	b.up.push(i)
	return i
}

// refDelivered returns a pointer to the record of an id the client got,
// whose idHash is h, valid until the book next changes; an id new to the
// delivered window enters it as got on lg alone, evicting the window's
// oldest once it is full. found says whether it was there. entry is k's
// entry when the caller knows it, -1 to look k up: the client mostly gets
// the id the upstream sent as it was sent, whose entry setUp has just
// returned, so that a second lookup would find what the first one did.
func (b *idBook) refDelivered(k []byte, h uint64, entry int32, lg *logical) (rec *deliveredRec, found bool) {
	at := idSpot{ent: entry, slot: -1}
	if entry < 0 {
		at = b.t.spotH(k, h)
	}
	i := at.ent
	if i >= 0 && b.t.marks[i]&inDown != 0 {
		return &b.t.ents[i].val.down, true
	}
	b.makeRoom(&b.down, inDown)
	if i < 0 {
		i = b.t.insertAt(k, h, at.slot, inDown)
		b.t.ents[i].val = idFacts{down: deliveredRec{lg: lg}}
	} else {
		b.t.ents[i].val.down = deliveredRec{lg: lg}
		b.t.marks[i] |= inDown
	}
	b.down.push(i)
	return &b.t.ents[i].val.down, false
}

// delivered returns the record of an id the client got.
func (b *idBook) delivered(k []byte) (deliveredRec, bool) {
	if i := b.t.find(k, idHash(k)); i >= 0 && b.t.marks[i]&inDown != 0 {
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
	if left := b.t.marks[oi] &^ fact; left != 0 {
		b.t.marks[oi] = left
	} else {
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
