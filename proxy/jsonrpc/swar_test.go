package jsonrpc

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// TestSpecialFlagsFirst: the lowest byte special flags is the first byte
// of the word that is not plain string content, for words mixing the
// bytes at the edges of every test with any others.
func TestSpecialFlagsFirst(t *testing.T) {
	edges := []byte{0x00, 0x01, 0x1f, 0x20, 0x21, '"', 0x23, 'A', 0x5b, '\\', 0x5d, 0x7e, 0x7f, 0x80, 0x81, 0xa2, 0xdc, 0xfe, 0xff}
	rng := rand.New(rand.NewPCG(5, 6))
	var buf [8]byte
	check := func() {
		t.Helper()
		want := 8
		for i, c := range buf {
			if !plain[c] {
				want = i
				break
			}
		}
		got := 8
		if m := special(binary.LittleEndian.Uint64(buf[:])); m != 0 {
			got = bits.TrailingZeros64(m) / 8
		}
		if got != want {
			t.Fatalf("% x: special flags byte %d first, want %d", buf, got, want)
		}
	}
	for _, a := range edges {
		for _, b := range edges {
			for pos := range 7 {
				for i := range buf {
					buf[i] = 'a'
				}
				buf[pos], buf[pos+1] = a, b
				check()
			}
		}
	}
	for range 200000 {
		for i := range buf {
			if rng.IntN(2) == 0 {
				buf[i] = edges[rng.IntN(len(edges))]
			} else {
				buf[i] = byte(rng.IntN(256))
			}
		}
		check()
	}
	for c := range 256 {
		for i := range buf {
			buf[i] = byte(c)
		}
		check()
	}
}
