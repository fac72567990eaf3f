package trace

import (
	"math/bits"
	"slices"
)

// Integers are written straight into the buffer, two digits at a time,
// rather than into strconv's scratch array and copied: every line of a
// trace holds a few.

// digitPairs holds "00" to "99".
const digitPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// appendInt appends v in decimal, as strconv.AppendInt(b, v, 10) does.
func appendInt(b []byte, v int64) []byte {
	if v < 0 {
		return appendUint(append(b, '-'), -uint64(v))
	}
	return appendUint(b, uint64(v))
}

// appendUint appends v in decimal, as strconv.AppendUint(b, v, 10) does.
func appendUint(b []byte, v uint64) []byte {
	if v < 10 {
		return append(b, byte('0'+v))
	}
	n := decimalLen(v)
	b = slices.Grow(b, n)
	b = b[:len(b)+n]
	d := b[len(b)-n:]
	i := n
	for v >= 100 {
		q := v / 100
		r := 2 * (v - 100*q)
		i -= 2
		d[i], d[i+1] = digitPairs[r], digitPairs[r+1]
		v = q
	}
	if v >= 10 {
		d[0], d[1] = digitPairs[2*v], digitPairs[2*v+1]
	} else {
		d[0] = byte('0' + v)
	}
	return b
}

// powersOfTen holds 10⁰ to 10¹⁹.
var powersOfTen = func() (p [20]uint64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = 10 * p[i-1]
	}
	return p
}()

// decimalLen returns how many decimal digits v takes.
func decimalLen(v uint64) int {
	// log10(2) ≈ 1233/4096: from the bit length, an estimate that is
	// exact or one too small.
	n := bits.Len64(v) * 1233 >> 12
	if v >= powersOfTen[n] {
		n++
	}
	return n
}
