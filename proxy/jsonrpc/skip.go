package jsonrpc

import (
	"encoding/binary"
	"math/bits"
)

// maxDepth is encoding/json's nesting limit. Using the same one makes Scan
// and encoding/json agree on which documents are JSON.
const maxDepth = 10000

// String flags returned by skipString.
const (
	// strEscaped marks a string with at least one backslash escape.
	strEscaped uint8 = 1 << iota
	// strNonASCII marks a string with bytes >= 0x80, which a decoder checks
	// for invalid UTF-8.
	strNonASCII
)

// plain marks the bytes that stand for themselves inside a JSON string
// and need no further look: not a quote, not a backslash, not a control
// character, not part of a multi-byte sequence.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isHex(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON whitespace, or len(data).
func skipSpace(data []byte, i int) int {
	if i < len(data) && data[i] > ' ' {
		return i // compact JSON: nothing to skip
	}
	for i < len(data) && isSpace(data[i]) {
		i++
	}
	return i
}

// skipString skips the string whose opening quote is data[i]. It returns
// the index just past the closing quote and what the content holds.
func skipString(data []byte, i int) (end int, flags uint8, ok bool) {
	i++
	for {
		// Eight bytes at a time while eight remain, inline because most
		// strings are short, then byte by byte.
		for i+8 <= len(data) {
			if m := special(binary.LittleEndian.Uint64(data[i:])); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				goto look
			}
			i += 8
		}
		for i < len(data) && plain[data[i]] {
			i++
		}
		if i >= len(data) {
			return 0, 0, false
		}
	look:
		switch c := data[i]; {
		case c == '"':
			return i + 1, flags, true
		case c == '\\':
			flags |= strEscaped
			n := escapeLen(data, i)
			if n == 0 {
				return 0, 0, false
			}
			i += n
		case c < 0x20:
			return 0, 0, false
		default:
			flags |= strNonASCII
			i++
		}
	}
}

// escapeLen returns the length of the escape sequence at data[i] (a
// backslash), or 0 when it is not a valid one. (Tables keep it small
// enough to be inlined where strings are skipped.)
func escapeLen(data []byte, i int) int {
	if i+1 >= len(data) {
		return 0
	}
	n := int(escapes[data[i+1]])
	if n == 6 && (i+6 > len(data) || !hexDigit[data[i+2]] || !hexDigit[data[i+3]] || !hexDigit[data[i+4]] || !hexDigit[data[i+5]]) {
		return 0
	}
	return n
}

// escapes holds the length of each escape sequence by the byte after its
// backslash, 0 for a byte that starts none.
var escapes = [256]uint8{'"': 2, '\\': 2, '/': 2, 'b': 2, 'f': 2, 'n': 2, 'r': 2, 't': 2, 'u': 6}

// hexDigit marks the hexadecimal digits.
var hexDigit = func() (t [256]bool) {
	for c := range t {
		t[c] = isHex(byte(c))
	}
	return t
}()

// skipNumber skips the number that starts at data[i]. Whatever follows it
// is the caller's to check.
func skipNumber(data []byte, i int) (int, bool) {
	if data[i] == '-' {
		i++
	}
	switch {
	case i >= len(data):
		return 0, false
	case data[i] == '0':
		i++
	case isDigit(data[i]):
		i = skipDigits(data, i)
	default:
		return 0, false
	}
	return skipFraction(data, i)
}

// skipFraction skips what may follow the integer part of a number, which
// ends before data[i]: a fraction, an exponent, both or neither.
func skipFraction(data []byte, i int) (int, bool) {
	if i < len(data) && data[i] == '.' {
		j := skipDigits(data, i+1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		j := skipDigits(data, i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}

func skipDigits(data []byte, i int) int {
	for i < len(data) && isDigit(data[i]) {
		i++
	}
	return i
}

// skipLiteral skips true, false or null at data[i].
func skipLiteral(data []byte, i int, lit string) (int, bool) {
	if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

// skipScalar skips the string, number or literal at data[i].
func skipScalar(data []byte, i int) (int, bool) {
	switch c := data[i]; {
	case c == '"':
		end, _, ok := skipString(data, i)
		return end, ok
	case c == '-' || isDigit(c):
		return skipNumber(data, i)
	case c == 't':
		return skipLiteral(data, i, "true")
	case c == 'f':
		return skipLiteral(data, i, "false")
	case c == 'n':
		return skipLiteral(data, i, "null")
	}
	return 0, false
}

// skipValue skips any JSON value at data[i], a non-space byte, that sits
// depth levels deep when it is an object or array (the top-level value is
// at depth 1).
func skipValue(data []byte, i, depth int) (int, bool) {
	if c := data[i]; c == '{' || c == '[' {
		return skipComposite(data, i, depth)
	}
	return skipScalar(data, i)
}

// kinds is a stack of open containers, one bit each: set for an object.
// The first 64 levels live in a word so that ordinary documents never
// touch the heap.
type kinds struct {
	low  uint64
	high []uint64
	n    int
}

func (k *kinds) push(object bool) {
	var bit uint64
	if object {
		bit = 1
	}
	if k.n < 64 {
		k.low = k.low&^(1<<k.n) | bit<<k.n
	} else {
		w, b := (k.n-64)/64, uint(k.n%64)
		if w == len(k.high) {
			k.high = append(k.high, 0)
		}
		k.high[w] = k.high[w]&^(1<<b) | bit<<b
	}
	k.n++
}

func (k *kinds) pop() { k.n-- }

// object reports whether the innermost open container is an object.
func (k *kinds) object() bool {
	t := k.n - 1
	if t < 64 {
		return k.low>>t&1 == 1
	}
	return k.high[(t-64)/64]>>(t%64)&1 == 1
}

// States of skipComposite.
const (
	stOpen  = iota // after '{' or '[': the first entry or the close
	stEntry        // after ',': an entry
	stValue        // a value
	stNext         // after a value: ',' or the close
)

// skipDeep skips the object or array that opens at data[i], checking it
// the way encoding/json does, without recursion: nesting costs one bit. It
// takes over from skipComposite past fastDepth levels.
func skipDeep(data []byte, i, depth int) (int, bool) {
	if depth > maxDepth {
		return 0, false
	}
	var st kinds
	st.push(data[i] == '{')
	i++
	state := stOpen
	for {
		i = skipSpace(data, i)
		if i >= len(data) {
			return 0, false
		}
		c := data[i]
		switch state {
		case stOpen, stEntry:
			if state == stOpen && c == closer(st.object()) {
				i, state = i+1, stNext
				if st.pop(); st.n == 0 {
					return i, true
				}
				continue
			}
			if st.object() {
				var ok bool
				if i, ok = skipKey(data, i); !ok {
					return 0, false
				}
			}
			state = stValue
		case stValue:
			if c == '{' || c == '[' {
				if depth+st.n > maxDepth {
					return 0, false
				}
				st.push(c == '{')
				i, state = i+1, stOpen
				continue
			}
			var ok bool
			if i, ok = skipScalar(data, i); !ok {
				return 0, false
			}
			state = stNext
		case stNext:
			switch c {
			case ',':
				i, state = i+1, stEntry
			case closer(st.object()):
				i++
				if st.pop(); st.n == 0 {
					return i, true
				}
			default:
				return 0, false
			}
		}
	}
}

func closer(object bool) byte {
	if object {
		return '}'
	}
	return ']'
}

// skipKey skips a member name and its colon, from data[i] on, and returns
// the index just past the colon.
func skipKey(data []byte, i int) (int, bool) {
	if data[i] != '"' {
		return 0, false
	}
	end, _, ok := skipString(data, i)
	if !ok {
		return 0, false
	}
	i = skipSpace(data, end)
	if i >= len(data) || data[i] != ':' {
		return 0, false
	}
	return i + 1, true
}
