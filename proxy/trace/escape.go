package trace

import (
	"unicode/utf8"
)

// The trace writes its strings itself, into the Writer's reused buffer,
// with the escapes its format has (TestEncoderGolden): \u0008 and \u000c
// where encoding/json writes \b and \f.

// jsonSafe holds the bytes a JSON string carries as they are: ASCII but
// the controls, the quote and the backslash.
var jsonSafe = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD,
// as encoding/json does; callers that must keep every byte use
// appendBytesAs. Unlike encoding/json, <, > and & are not escaped: a
// trace is not HTML.
func appendString(b []byte, s string) []byte {
	b, _ = appendEscaped(b, s, true)
	return b
}

// appendValidString appends s as a JSON string when s is valid UTF-8, and
// reports whether it was; when it is not, it returns b as it was, so that
// the caller can write s another way.
func appendValidString(b []byte, s []byte) ([]byte, bool) {
	return appendEscaped(b, s, false)
}

// appendEscaped appends s quoted and escaped to b; on invalid UTF-8 it
// writes U+FFFD when replace is set and gives up otherwise. U+2028 and
// U+2029 are escaped too: they are valid JSON but end a line in a
// JavaScript source, and the timeline embeds trace text in a script.
func appendEscaped[S string | []byte](b []byte, s S, replace bool) ([]byte, bool) {
	start := len(b)
	b = append(b, '"')
	for j := 0; j < len(s); {
		c := s[j]
		if jsonSafe[c] {
			b = append(b, c)
			j++
			continue
		}
		if c < utf8.RuneSelf {
			b = escapeASCII(b, c)
			j++
			continue
		}
		// A character is at most utf8.UTFMax bytes: decoding that much
		// converts on the stack.
		r, size := utf8.DecodeRuneInString(string(s[j:min(j+utf8.UTFMax, len(s))]))
		switch {
		case r == utf8.RuneError && size == 1:
			if !replace {
				return b[:start], false
			}
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, `\u202`...)
			b = append(b, hexDigits[r&0xf])
		default:
			b = append(b, s[j:j+size]...)
		}
		j += size
	}
	return append(b, '"'), true
}

// escapeASCII appends the escape of the ASCII byte c.
func escapeASCII(b []byte, c byte) []byte {
	if e := shortEscape[c]; e != 0 {
		return append(b, '\\', e)
	}
	return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
}

// shortEscape holds, for the ASCII bytes escaped with a backslash and one
// character, that character; the other controls take \u00XX.
var shortEscape = [utf8.RuneSelf]byte{'"': '"', '\\': '\\', '\n': 'n', '\r': 'r', '\t': 't'}
