package jsonrpc

import (
	"encoding/binary"
	"math/bits"
)

// Eight bytes at a time: a byte of a word w is special inside a string when
// it is a quote, a backslash, below 0x20 or at or above 0x80. For each test
// the lowest byte flagged is exact (a borrow only runs upwards from a byte
// that matched), which is all skipPlain needs.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// special flags, in the high bit of each byte, the bytes of w that are not
// plain string content; the lowest flag is the first such byte.
func special(w uint64) uint64 {
	ctl := (w - 0x20*ones) &^ w
	q := w ^ '"'*ones
	quote := (q - ones) &^ q
	b := w ^ '\\'*ones
	bslash := (b - ones) &^ b
	return (ctl | quote | bslash | w) & highs
}

// skipPlain returns the index of the first byte at or after i that is not
// plain string content, looking at whole words while eight bytes remain; a
// shorter tail is left to the caller's byte loop, which checks the same.
func skipPlain(data []byte, i int) int {
	for i+8 <= len(data) {
		if m := special(binary.LittleEndian.Uint64(data[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
		i += 8
	}
	return i
}
