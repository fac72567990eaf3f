package verify

import (
	"fmt"
	"unsafe"
)

// idTable maps event ids to their idFacts, for an idBook. It is hand-made,
// not a map, for the per-event budgets: no allocation, and CPU (1 and 4 in
// docs/performance.md). It owns copies of its keys and reuses a removed entry, key storage
// included, so that a full book allocates nothing and never rehashes, and
// finds where an absent key goes in the probe that missed it. Open
// addressing with linear probing.
//
// A removal touches neither the slots nor the entry, each a likely cache
// miss in a large table: it clears the entry's mark, and the slots that
// point to an unmarked entry, or to an entry used again for a key whose
// hash has another tag, are stale (one with the same tag is a second way
// to the same entry, which lookups, comparing keys, take for what it is).
// A lookup passes over stale slots; an insertion takes the first on its
// way, or the empty slot that ends it. Once half the slots are taken,
// they are cleared and every live key placed again, the array doubling
// until the live keys take at most 3/8 of it: between 8/3 and 16/3 slots
// per key the table ever held, never shrinking.
//
// The zero value is an empty table, ready to use. It is not safe for
// concurrent use.
type idTable struct {
	slots []idSlot // len is 0 or a power of two
	used  int      // slots not empty, stale or not
	ents  []idEntry
	homes []uint32 // the low bits of each entry's hash, by entry
	// marks holds a byte by entry: 0 for an entry not in use, and for one
	// in use what its caller marked it with (an idBook: the windows that
	// hold its id), so that one byte says both.
	marks []uint8
	free  []int32 // entries not in use
	n     int
}

// idEntry is one key and its value. A key of up to inlineKey bytes (most
// event ids) is held in the entry itself, so that a lookup touches one
// place in memory; a longer one in long, whose storage the entry keeps.
// idSlot points to an entry (ref is its index+1, 0 for an empty slot)
// and holds a tag of 16 bits of its hash, so that probing reads no entry
// but the one that most likely matches. The tag is taken from bits the
// home of a key in up to 65536 slots does not depend on.
type idSlot struct {
	ref uint16
	tag uint16
}

// maxTableEntries is the most entries an idTable holds: a slot's ref
// has 16 bits.
const maxTableEntries = 1<<16 - 1

// A session's idBook, two windows of idWindow, stays within it: a
// constant that overflows uint16 does not compile.
const _ = uint16(2 * idWindow)

// slotTag is the tag a slot holds for an entry whose homes value is h.
func slotTag(h uint32) uint16 { return uint16(h >> 16) }

type idEntry struct {
	n      int32
	inline [inlineKey]byte
	long   []byte
	val    idFacts
}

const inlineKey = 24

func (e *idEntry) key() []byte {
	if e.n <= inlineKey {
		return e.inline[:e.n]
	}
	return e.long
}

func (e *idEntry) setKey(k []byte) {
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

func (t *idTable) len() int { return t.n }

// find returns the index of k's entry, or -1.
func (t *idTable) find(k []byte, h uint64) int32 { return t.spotH(k, h).ent }

// idSpot is where a lookup left a key: its entry, or, for an absent key,
// the slot its insertion takes (the one place would have chosen then), so
// that inserting what a lookup just missed probes the slots once. The
// slot stays right while the table only removes: a removal makes no stale
// slot live and takes no empty one.
type idSpot struct {
	ent  int32 // the key's entry, -1 when absent
	slot int32 // for an absent key, the slot to take; -1 when there are no slots
}

// spotH finds k, whose idHash is h, and for an absent k the slot its
// insertion takes: the first stale slot on the way, or the empty one that
// ends it.
func (t *idTable) spotH(k []byte, h uint64) idSpot {
	if len(t.slots) == 0 {
		return idSpot{ent: -1, slot: -1}
	}
	mask := uint64(len(t.slots) - 1)
	tag := slotTag(uint32(h))
	free := int32(-1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s.ref == 0 {
			if free < 0 {
				free = int32(i)
			}
			return idSpot{ent: -1, slot: free}
		}
		j := int32(s.ref) - 1
		if s.tag == tag && t.marks[j] != 0 && string(t.ents[j].key()) == string(k) {
			return idSpot{ent: j, slot: -1}
		}
		if free < 0 && t.stale(s) {
			free = int32(i)
		}
	}
}

// stale says whether slot s, not empty, leads to no key: its entry was
// removed, or used again for a key whose hash has another tag.
func (t *idTable) stale(s idSlot) bool {
	r := int32(s.ref) - 1
	return t.marks[r] == 0 || slotTag(t.homes[r]) != s.tag
}

// insertAt enters k, absent, whose idHash is h, with mark (not 0), into
// the slot its spotH gave (-1: none), the table having only removed keys
// since, and returns its entry: the one removed last, if any, whose value
// is what it held last (the caller sets it). When the slots are due to be
// placed again, k takes the first stale or empty slot from its hash once
// they are.
func (t *idTable) insertAt(k []byte, h uint64, slot int32, mark uint8) int32 {
	if (t.used+1)*2 > len(t.slots) {
		t.rebuild()
		slot = -1
	}
	if len(t.free) == 0 {
		t.grow()
	}
	last := len(t.free) - 1
	i := t.free[last]
	t.free = t.free[:last]
	t.ents[i].setKey(k)
	t.homes[i] = uint32(h)
	t.marks[i] = mark
	t.n++
	if slot < 0 {
		t.place(i)
		return i
	}
	if t.slots[slot].ref == 0 {
		t.used++
	}
	t.slots[slot] = idSlot{ref: uint16(i + 1), tag: slotTag(uint32(h))}
	return i
}

// grow adds a free entry.
func (t *idTable) grow() {
	if len(t.ents) == maxTableEntries {
		// The windows' bounds keep every table far below it.
		panic(fmt.Sprintf("verify: an id table of %d entries is full", maxTableEntries))
	}
	t.ents = append(t.ents, idEntry{})
	t.homes = append(t.homes, 0)
	t.marks = append(t.marks, 0)
	t.free = append(t.free, int32(len(t.ents)-1))
}

// place puts entry i in the first stale or empty slot from its hash.
// Taking a stale slot keeps every probe that passed it going: it was not
// empty, and is not.
func (t *idTable) place(i int32) {
	mask := uint32(len(t.slots) - 1)
	h := t.homes[i]
	for j := h & mask; ; j = (j + 1) & mask {
		s := t.slots[j]
		if s.ref == 0 {
			t.used++
		} else if !t.stale(s) {
			continue
		}
		t.slots[j] = idSlot{ref: uint16(i + 1), tag: slotTag(h)}
		return
	}
}

// remove takes entry i out; its key storage, and its value, stay until
// the next insert takes the entry.
func (t *idTable) remove(i int32) {
	t.marks[i] = 0
	t.free = append(t.free, i)
	t.n--
}

// rebuild clears the slots and places every live entry again, into twice
// as many slots (16 at first) while the live keys and one more would
// take more than 3/8 of them.
func (t *idTable) rebuild() {
	size := max(16, len(t.slots))
	for (t.n+1)*8 > size*3 {
		size *= 2
	}
	if size != len(t.slots) {
		t.slots = make([]idSlot, size)
	} else {
		clear(t.slots)
	}
	t.fill()
}

// fill places every live entry into slots all empty. No slot is stale
// yet, so that each entry takes the first empty slot from its hash, with
// no entry read but its own hash: a full window fills its slots again
// every few thousand insertions.
func (t *idTable) fill() {
	mask := uint32(len(t.slots) - 1)
	for i, m := range t.marks {
		if m == 0 {
			continue
		}
		h := t.homes[i]
		j := h & mask
		for t.slots[j].ref != 0 {
			j = (j + 1) & mask
		}
		t.slots[j] = idSlot{ref: uint16(i + 1), tag: slotTag(h)}
	}
	t.used = t.n
}
