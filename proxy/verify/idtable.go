package verify

import (
	"hash/maphash"
	"unsafe"
)

// hashSeed seeds the hashes the verifier compares: event data and ids.
// One seed for the life of the process, so that a hash taken live and one
// taken from a trace read back in the same process agree.
var hashSeed = maphash.MakeSeed()

// idHash hashes an event id for the verifier's id tables.
func idHash(id []byte) uint64 { return maphash.Bytes(hashSeed, id) }

// idTable maps byte-string keys (event ids) to V. It owns copies of its
// keys and reuses an entry, key storage included, once the entry is
// removed, so that a table with as many insertions as removals (a full
// window) allocates nothing and never rehashes: lookups and insertions
// take the bytes the proxy read, with no string made of them. Open
// addressing with linear probing; a removal shifts the entries after it
// back, so no tombstone ever accumulates. The slot array doubles while the
// table grows to the most keys it ever held, and never shrinks.
//
// Removing a key touches the slots and the low bits of its hash (homes),
// not its entry, which in a large table is the one place in memory the
// removal would otherwise miss the cache for: the entry's value stays
// until the entry is used again, which in a full window is at once.
//
// The zero value is an empty table, ready to use. It is not safe for
// concurrent use.
type idTable[V any] struct {
	slots []idSlot // len is 0 or a power of two
	ents  []idEntry[V]
	homes []uint32 // the low bits of each entry's hash, by entry
	free  []int32  // entries not in use
	n     int
}

// idEntry is one key and its value. A key of up to inlineKey bytes (most
// event ids) is held in the entry itself, so that a lookup touches one
// place in memory; a longer one in long, whose storage the entry keeps.
// idSlot points to an entry (ref is its index+1, 0 for an empty slot)
// and holds the low bits of its hash, so that probing reads no entry
// but the one that matches. (The slots are fewer than 2^32, so those
// bits say which slot is a key's home.)
type idSlot struct {
	ref int32
	h   uint32
}

type idEntry[V any] struct {
	n      int32
	inline [inlineKey]byte
	long   []byte
	val    V
}

const inlineKey = 24

func (e *idEntry[V]) key() []byte {
	if e.n <= inlineKey {
		return e.inline[:e.n]
	}
	return e.long
}

func (e *idEntry[V]) setKey(k []byte) {
	e.n = int32(len(k))
	if len(k) <= inlineKey {
		copy(e.inline[:], k)
		return
	}
	e.long = append(e.long[:0], k...)
}

// bytesOf views s as bytes, for lookups and copies only: the bytes must
// not be written.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

func (t *idTable[V]) len() int { return t.n }

// find returns the index of k's entry, or -1.
func (t *idTable[V]) find(k []byte) int32 { return t.findH(k, idHash(k)) }

// findH is find for k whose idHash is h.
func (t *idTable[V]) findH(k []byte, h uint64) int32 {
	if t.n == 0 {
		return -1
	}
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s.ref == 0 {
			return -1
		}
		if s.h != uint32(h) {
			continue
		}
		if string(t.ents[s.ref-1].key()) == string(k) {
			return s.ref - 1
		}
	}
}

func (t *idTable[V]) get(k []byte) (V, bool) {
	if i := t.find(k); i >= 0 {
		return t.ents[i].val, true
	}
	var zero V
	return zero, false
}

// insert adds k, which must be absent, and returns its entry's index.
func (t *idTable[V]) insert(k []byte, v V) int32 { return t.insertH(k, idHash(k), v) }

// insertH is insert for k whose idHash is h.
func (t *idTable[V]) insertH(k []byte, h uint64, v V) int32 {
	if (t.n+1)*2 > len(t.slots) {
		t.grow()
	}
	var i int32
	if n := len(t.free); n > 0 {
		i, t.free = t.free[n-1], t.free[:n-1]
	} else {
		t.ents = append(t.ents, idEntry[V]{})
		t.homes = append(t.homes, 0)
		i = int32(len(t.ents) - 1)
	}
	e := &t.ents[i]
	e.setKey(k)
	e.val = v
	t.homes[i] = uint32(h)
	t.place(i)
	t.n++
	return i
}

// place puts entry i in the first free slot from its hash.
func (t *idTable[V]) place(i int32) {
	mask := uint32(len(t.slots) - 1)
	h := t.homes[i]
	j := h & mask
	for t.slots[j].ref != 0 {
		j = (j + 1) & mask
	}
	t.slots[j] = idSlot{ref: i + 1, h: h}
}

// remove takes entry i out; its key storage, and its value, stay until
// the next insert takes the entry.
func (t *idTable[V]) remove(i int32) {
	mask := uint32(len(t.slots) - 1)
	hole := t.homes[i] & mask
	for t.slots[hole].ref != i+1 {
		hole = (hole + 1) & mask
	}
	// Shift back every entry of the run after the hole that may live
	// there: one whose home slot is not cyclically within (hole, j].
	// (The mask keeps less than 32 bits, so a slot's h gives the home.)
	for j := (hole + 1) & mask; t.slots[j].ref != 0; j = (j + 1) & mask {
		home := t.slots[j].h & mask
		if (j-home)&mask >= (j-hole)&mask {
			t.slots[hole] = t.slots[j]
			hole = j
		}
	}
	t.slots[hole] = idSlot{}
	t.free = append(t.free, i)
	t.n--
}

// grow doubles the slots (16 at first) and places every entry again.
func (t *idTable[V]) grow() {
	old := t.slots
	t.slots = make([]idSlot, max(16, 2*len(old)))
	for _, s := range old {
		if s.ref != 0 {
			t.place(s.ref - 1)
		}
	}
}

// each calls fn for every key held; fn must not change the table.
func (t *idTable[V]) each(fn func(k []byte, v V)) {
	for _, s := range t.slots {
		if s.ref != 0 {
			e := &t.ents[s.ref-1]
			fn(e.key(), e.val)
		}
	}
}
