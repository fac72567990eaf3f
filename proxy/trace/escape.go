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
// finds the next byte that needs attention eight bytes at a time, copies
// the run before it at once, writes escapes by index into room made ahead
// rather than by appending byte by byte, and checks UTF-8 in the same
// pass.

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
// bytes at or above 0x80. Only the lowest flag is exact (a borrow only
// runs upwards from a byte that matched), and only the lowest is used.
func special(w uint64) uint64 {
	ctl := (w - 0x20*ones) &^ w
	q := w ^ '"'*ones
	quote := (q - ones) &^ q
	b := w ^ '\\'*ones
	bslash := (b - ones) &^ b
	return (ctl | quote | bslash | w) & highs
}

const hexDigits = "0123456789abcdef"

// escapeSlack is the room made past s's own length: a closing quote, the
// longest escape (six bytes for one byte of s) and a little more, so that
// a string with a few escapes is written without growing b again.
const escapeSlack = 32

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
// It keeps this invariant: at the top of each turn, the room past n holds
// the rest of s as it is plus eight bytes: enough for a word of eight
// bytes stored whole (of which only the plain ones count), or for a run,
// one escape of up to six bytes (which replaces at least one byte of s)
// and the closing quote.
func appendEscaped(b, s []byte, replace bool) ([]byte, bool) {
	start := len(b)
	if cap(b)-start < len(s)+escapeSlack {
		b = slices.Grow(b, len(s)+escapeSlack)
	}
	d := b[:cap(b)]
	n := start
	d[n] = '"'
	n++
	for i := 0; ; {
		if len(d)-n < len(s)-i+8 {
			d = slices.Grow(d[:n], 2*(len(s)-i)+escapeSlack)
			d = d[:cap(d)]
		}
		// The next byte that needs attention, j, with the plain bytes
		// before it copied: a word at a time while eight bytes remain
		// (the word is stored whole, the bytes past j to be written
		// over), then byte by byte.
		j := i
		for j+8 <= len(s) {
			w := binary.LittleEndian.Uint64(s[j:])
			binary.LittleEndian.PutUint64(d[n:], w)
			if m := special(w); m != 0 {
				k := bits.TrailingZeros64(m) >> 3
				j, n = j+k, n+k
				break
			}
			j, n = j+8, n+8
		}
		for j < len(s) && jsonSafe[s[j]] {
			d[n] = s[j]
			j, n = j+1, n+1
		}
		if j == len(s) {
			break
		}
		c := s[j]
		i = j + 1
		if c < utf8.RuneSelf {
			d[n] = '\\'
			if e := shortEscape[c]; e != 0 {
				d[n+1] = e
				n += 2
				continue
			}
			d[n+1], d[n+2], d[n+3], d[n+4], d[n+5] = 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf]
			n += 6
			continue
		}
		switch size := runeLen(s, j); {
		case size == 0:
			if !replace {
				return d[:start], false
			}
			n += copy(d[n:], `\ufffd`)
		case size == 3 && c == 0xe2 && s[j+1] == 0x80 && s[j+2]&^1 == 0xa8:
			// U+2028 and U+2029 are valid JSON but end a line in a
			// JavaScript source; the timeline embeds trace text in a
			// script.
			d[n], d[n+1], d[n+2], d[n+3], d[n+4], d[n+5] = '\\', 'u', '2', '0', '2', hexDigits[s[j+2]&0xf]
			n += 6
			i = j + 3
		default:
			n += copy(d[n:], s[j:j+size])
			i = j + size
		}
	}
	d[n] = '"'
	return d[:n+1], true
}

// shortEscape holds, for the ASCII bytes escaped with a backslash and one
// character, that character; the other controls take \u00XX.
var shortEscape = [utf8.RuneSelf]byte{'"': '"', '\\': '\\', '\n': 'n', '\r': 'r', '\t': 't'}

// runeLen returns the length of the valid UTF-8 sequence that starts at
// s[i] (a byte >= 0x80), or 0 when none does.
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
