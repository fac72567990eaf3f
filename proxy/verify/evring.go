package verify

import "math/bits"

// evRing holds a logical stream's events with an id, up to idWindow, in
// chunks that are allocated as it fills and never moved: a first chunk of
// evFirst records, so that a short stream (a POST's priming event and its
// answer) holds little, then chunks that each double the ring (evFirst
// more, then 2·evFirst, 4·evFirst, ...), so that a long one allocates as
// seldom as an appended slice would. Entering an event copies no earlier
// one and leaves no array behind. (A slice grown by append copied every
// record at each doubling, and left the old array to the collector: with
// thousands of streams filling their rings at once, the process spent a
// tenth of its time clearing and copying them.)
//
// The zero evRing is empty. It is not safe for concurrent use; the
// Verifier's lock guards it.
type evRing struct {
	chunks [][]evRec
	n      int // records held: slots 0 to n-1
}

// evFirst is how many records the first chunk holds: a power of two
// (2^evFirstLog) that divides idWindow.
const (
	evFirstLog = 3
	evFirst    = 1 << evFirstLog
)

// len is how many records the ring holds.
func (r *evRing) len() int { return r.n }

// at is slot i, 0 <= i < len(): chunk 0 holds slots 0 to evFirst-1, and
// chunk k > 0 the slots from evFirst·2^(k-1) to twice that, less one.
func (r *evRing) at(i int) *evRec {
	if i < evFirst {
		return &r.chunks[0][i]
	}
	b := bits.Len(uint(i)) - 1 // i's chunk starts at 2^b
	return &r.chunks[b-evFirstLog+1][i-1<<b]
}

// add makes room for one more record and returns its slot, allocating a
// chunk when the ring's chunks are full: at slot 0, and at every power of
// two from evFirst on, a chunk as large as the ring so far.
func (r *evRing) add() int {
	i := r.n
	switch {
	case i == 0:
		r.chunks = append(make([][]evRec, 0, 2), make([]evRec, evFirst))
	case i >= evFirst && i&(i-1) == 0:
		r.chunks = append(r.chunks, make([]evRec, i))
	}
	r.n++
	return i
}
