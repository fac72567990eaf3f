package jsonrpc

// The skips of this file and swar.go, and knownKey, are hand-made for one
// budget: every event's data goes through Scan, and fray's CPU per event in
// bulk stays within 8x httputil.ReverseProxy's (docs/performance.md; a
// plain byte-at-a-time scanner took it past that). FuzzScan holds them to
// encoding/json.

// fastDepth is how many levels of nesting skipComposite walks by recursion,
// one tight loop per object or array, before it hands what is nested deeper
// to skipDeep, whose explicit stack costs a bit per level however deep.
// Both check the same grammar and the same nesting limit.
const fastDepth = 32

// skipComposite skips the object or array that opens at data[i], depth
// levels deep, checking it the way encoding/json does.
func skipComposite(data []byte, i, depth int) (int, bool) {
	return skipNested(data, i, depth, fastDepth)
}

// skipNested skips the object or array at data[i], recursing at most left
// levels further. What nearly every message nests (names and strings,
// integers, a colon or a comma right after what it follows) is read in
// this loop, without a call: a call per name or value costs about as much
// as reading it. Anything else goes to the general skips, from where the
// loop stopped.
func skipNested(data []byte, i, depth, left int) (int, bool) {
	if left == 0 {
		return skipDeep(data, i, depth)
	}
	if depth > maxDepth {
		return 0, false
	}
	object := data[i] == '{'
	close := closer(object)
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == close {
		return i + 1, true
	}
	for {
		if i >= len(data) {
			return 0, false
		}
		var ok bool
		if object {
			if data[i] != '"' {
				return 0, false
			}
			j := i + 1
			for {
				if j = contentRun(data, j); j >= len(data) {
					return 0, false
				}
				if data[j] == '"' {
					break
				}
				n := 0
				if data[j] == '\\' {
					n = escapeLen(data, j)
				}
				if n == 0 {
					return 0, false // a control byte, or a bad escape
				}
				j += n
			}
			i = j + 1
			if i < len(data) && data[i] == ':' {
				i++
			} else if i = skipSpace(data, i); i < len(data) && data[i] == ':' {
				i++
			} else {
				return 0, false
			}
			if i = skipSpace(data, i); i >= len(data) {
				return 0, false
			}
		}
		switch c := data[i]; {
		case c == '"': // as a name is, above
			j := i + 1
			for {
				if j = contentRun(data, j); j >= len(data) {
					return 0, false
				}
				if data[j] == '"' {
					break
				}
				n := 0
				if data[j] == '\\' {
					n = escapeLen(data, j)
				}
				if n == 0 {
					return 0, false
				}
				j += n
			}
			i = j + 1
		case '1' <= c && c <= '9':
			i++
			for i < len(data) && isDigit(data[i]) {
				i++
			}
			if i < len(data) && (data[i] == '.' || data[i] == 'e' || data[i] == 'E') {
				if i, ok = skipFraction(data, i); !ok {
					return 0, false
				}
			}
		case c == '{' || c == '[':
			if i, ok = skipNested(data, i, depth+1, left-1); !ok {
				return 0, false
			}
		default:
			if i, ok = skipScalar(data, i); !ok {
				return 0, false
			}
		}
		if i = skipSpace(data, i); i >= len(data) {
			return 0, false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case close:
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// contentRun returns the index of the first byte at or after j that is
// a quote, a backslash or a control byte, or len(data). It looks at a byte
// at a time, four to a round: most strings a message nests are a few bytes
// long, and then a byte at a time ends sooner than a word at a time, whose
// end waits for the word's load and test before the next string can start.
func contentRun(data []byte, j int) int {
	for j+4 <= len(data) {
		d := data[j : j+4]
		if !content[d[0]] {
			return j
		}
		if !content[d[1]] {
			return j + 1
		}
		if !content[d[2]] {
			return j + 2
		}
		if !content[d[3]] {
			return j + 3
		}
		j += 4
	}
	for j < len(data) && content[data[j]] {
		j++
	}
	return j
}

// content marks the bytes a string holds as they are: all but the quote,
// the backslash and the control bytes. (Unlike plain, it takes the bytes
// from 0x80 on, which only matter to a string whose content is decoded.)
var content = func() (t [256]bool) {
	for c := 0x20; c < 0x100; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()
