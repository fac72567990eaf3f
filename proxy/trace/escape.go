package trace

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"unicode/utf8"
	"unsafe"
)

// The escaping of a JSON string is on the proxy's per-event path: most of
// a traced event's line is its raw SSE block, JSON full of quotes. So it
// looks at eight bytes at a time for the bytes that need attention,
// stores the plain ones a word at a time around the escapes, writes into
// room made ahead rather than appending byte by byte, and checks UTF-8 in
// the same pass.

// jsonSafe holds the bytes a JSON string carries as they are: ASCII but
// the controls, the quote and the backslash.
var jsonSafe = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// special flags, in the high bit of each byte, the bytes of w that
// jsonSafe does not hold: the quote, the backslash, the controls and the
// bytes at or above 0x80. Every flag is exact: each sum stays within its
// byte, so that the bytes of a word can be handled one flag after the
// other.
func special(w uint64) uint64 {
	lo := w &^ highs
	plain := (lo + (0x80-0x20)*ones) & // at or above 0x20
		((lo ^ '"'*ones) + 0x7f*ones) & // not a quote
		((lo ^ '\\'*ones) + 0x7f*ones) // not a backslash
	return (^plain | w) & highs
}

const hexDigits = "0123456789abcdef"

// escapeSlack is the room made past what s takes as it is: enough for
// the escapes of one word of eight controls (six bytes each), a word
// stored whole past the end of what is written, and the closing quote.
const escapeSlack = 64

// appendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD,
// as encoding/json does; callers that must keep every byte use enc.bytes.
// Unlike encoding/json, <, > and & are not escaped: a trace is not HTML.
func appendString(b []byte, s string) []byte {
	b, _ = appendEscaped(b, viewBytes(s), true)
	return b
}

// viewBytes views s as bytes, which appendEscaped only reads.
func viewBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// appendValidString appends s as a JSON string when s is valid UTF-8, and
// reports whether it was; when it is not, it returns b as it was (perhaps
// with more capacity), so that the caller can write s another way.
func appendValidString(b []byte, s []byte) ([]byte, bool) {
	return appendEscaped(b, s, false)
}

// appendEscaped writes s quoted and escaped into b; on invalid UTF-8 it
// writes U+FFFD when replace is set and gives up otherwise.
//
// At the top of each turn, the room past n holds the rest of s as it is
// plus escapeSlack. A word of eight bytes with no byte at or above 0x80 is
// handled whole, its plain bytes stored a word at a time around its
// escapes; the rest, and the tail shorter than a word, byte by byte.
func appendEscaped(b, s []byte, replace bool) ([]byte, bool) {
	start := len(b)
	if cap(b)-start < len(s)+escapeSlack+1 {
		b = slices.Grow(b, len(s)+escapeSlack+1)
	}
	d := b[:cap(b)]
	n := start
	d[n] = '"'
	n++
	for j := 0; ; {
		if len(d)-n < len(s)-j+escapeSlack {
			d = slices.Grow(d[:n], 2*(len(s)-j)+escapeSlack)
			d = d[:cap(d)]
		}
		if j+8 <= len(s) {
			w := binary.LittleEndian.Uint64(s[j:])
			m := special(w)
			if m == 0 {
				binary.LittleEndian.PutUint64(d[n:], w)
				j, n = j+8, n+8
				continue
			}
			if m&w == 0 {
				// Every byte flagged is ASCII: the word is written
				// whole, its plain bytes stored a word at a time
				// around each escape.
				p := 0 // the bytes of w written
				for ; m != 0; m &= m - 1 {
					k := bits.TrailingZeros64(m) >> 3
					binary.LittleEndian.PutUint64(d[n:], w>>(8*p))
					n = escapeASCII(d, n+k-p, byte(w>>(8*k)))
					p = k + 1
				}
				binary.LittleEndian.PutUint64(d[n:], w>>(8*p))
				j, n = j+8, n+8-p
				continue
			}
			k := bits.TrailingZeros64(m) >> 3
			binary.LittleEndian.PutUint64(d[n:], w)
			j, n = j+k, n+k
		} else {
			for j < len(s) && jsonSafe[s[j]] {
				d[n] = s[j]
				j, n = j+1, n+1
			}
			if j == len(s) {
				break
			}
		}
		c := s[j]
		if c < utf8.RuneSelf {
			n = escapeASCII(d, n, c)
			j++
			continue
		}
		switch size := runeLen(s, j); {
		case size == 0:
			if !replace {
				return d[:start], false
			}
			n += copy(d[n:], `\ufffd`)
			j++
		case size == 3 && c == 0xe2 && s[j+1] == 0x80 && s[j+2]&^1 == 0xa8:
			// U+2028 and U+2029 are valid JSON but end a line in a
			// JavaScript source; the timeline embeds trace text in a
			// script.
			d[n], d[n+1], d[n+2], d[n+3], d[n+4], d[n+5] = '\\', 'u', '2', '0', '2', hexDigits[s[j+2]&0xf]
			n += 6
			j += 3
		default:
			// A character of two to four bytes, as it is.
			d[n], d[n+1] = c, s[j+1]
			if size > 2 {
				d[n+2] = s[j+2]
				if size > 3 {
					d[n+3] = s[j+3]
				}
			}
			n += size
			j += size
		}
	}
	d[n] = '"'
	return d[:n+1], true
}

// escapeASCII writes the escape of the ASCII byte c at d[n:] and returns
// the new n.
func escapeASCII(d []byte, n int, c byte) int {
	d[n] = '\\'
	if e := shortEscape[c&0x7f]; e != 0 {
		d[n+1] = e
		return n + 2
	}
	d[n+1], d[n+2], d[n+3], d[n+4], d[n+5] = 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf]
	return n + 6
}

// shortEscape holds, for the ASCII bytes escaped with a backslash and one
// character, that character; the other controls take \u00XX.
var shortEscape = [utf8.RuneSelf]byte{'"': '"', '\\': '\\', '\n': 'n', '\r': 'r', '\t': 't'}

// runeLen returns the length of the valid UTF-8 sequence that starts at
// s[i] (a byte >= 0x80), or 0 when none does. It accepts exactly what
// utf8.DecodeRune accepts; it is written out because it makes escaping
// non-ASCII text about a fifth faster than DecodeRune does, since it
// decodes no rune (BenchmarkEscapeText).
func runeLen(s []byte, i int) int {
	cont := func(j int, lo, hi byte) bool { return j < len(s) && s[j] >= lo && s[j] <= hi }
	c := s[i]
	switch {
	case c < 0xc2:
		return 0
	case c < 0xe0:
		if cont(i+1, 0x80, 0xbf) {
			return 2
		}
	case c < 0xf0:
		lo, hi := byte(0x80), byte(0xbf)
		if c == 0xe0 {
			lo = 0xa0
		} else if c == 0xed {
			hi = 0x9f
		}
		if cont(i+1, lo, hi) && cont(i+2, 0x80, 0xbf) {
			return 3
		}
	case c < 0xf5:
		lo, hi := byte(0x80), byte(0xbf)
		if c == 0xf0 {
			lo = 0x90
		} else if c == 0xf4 {
			hi = 0x8f
		}
		if cont(i+1, lo, hi) && cont(i+2, 0x80, 0xbf) && cont(i+3, 0x80, 0xbf) {
			return 4
		}
	}
	return 0
}
