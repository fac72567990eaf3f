package jsonrpc

import (
	"unicode/utf16"
	"unicode/utf8"
)

// decodeRune decodes the character at s[i] of a string's content (which
// skipString has checked), the way encoding/json does: escapes are
// resolved, a valid surrogate pair makes one rune, and a lone surrogate or
// invalid UTF-8 becomes U+FFFD. It returns the rune and the bytes it took.
func decodeRune(s []byte, i int) (rune, int) {
	c := s[i]
	if c < utf8.RuneSelf && c != '\\' {
		return rune(c), 1
	}
	if c != '\\' {
		return utf8.DecodeRune(s[i:])
	}
	switch s[i+1] {
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	case 'u':
		r := hex4(s[i+2 : i+6])
		if !utf16.IsSurrogate(r) {
			return r, 6
		}
		if i+12 <= len(s) && s[i+6] == '\\' && s[i+7] == 'u' {
			if d := utf16.DecodeRune(r, hex4(s[i+8:i+12])); d != utf8.RuneError {
				return d, 12
			}
		}
		return utf8.RuneError, 6
	}
	return rune(s[i+1]), 2 // '"', '\\' or '/'
}

func hex4(h []byte) rune {
	var r rune
	for _, c := range h {
		switch {
		case c <= '9':
			c -= '0'
		case c <= 'F':
			c -= 'A' - 10
		default:
			c -= 'a' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// equalString reports whether the string content s, with the flags
// skipString gave it, decodes to t. It does not allocate.
func equalString(s []byte, flags uint8, t string) bool {
	if flags == 0 {
		return string(s) == t
	}
	var buf [utf8.UTFMax]byte
	j := 0
	for i := 0; i < len(s); {
		r, n := decodeRune(s, i)
		i += n
		k := utf8.EncodeRune(buf[:], r)
		if len(t)-j < k || string(buf[:k]) != t[j:j+k] {
			return false
		}
		j += k
	}
	return j == len(t)
}

// appendString appends the decoded string content s to dst.
func appendString(dst, s []byte, flags uint8) []byte {
	if flags == 0 {
		return append(dst, s...)
	}
	for i := 0; i < len(s); {
		r, n := decodeRune(s, i)
		i += n
		dst = utf8.AppendRune(dst, r)
	}
	return dst
}
