package jsonrpc

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
// levels further. What nearly every message nests (names and strings of
// plain bytes, integers, a colon or a comma right after what it follows) is
// read in this loop, without a call: a call per name or value costs about
// as much as reading it. Anything else goes to the general skips, from
// where the loop stopped.
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
			j := plainRun(data, i+1)
			if j < len(data) && data[j] == '"' {
				i = j + 1
			} else if i, _, ok = skipContent(data, j); !ok {
				return 0, false
			}
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
		case c == '"': // as the name above
			j := plainRun(data, i+1)
			if j < len(data) && data[j] == '"' {
				i = j + 1
			} else if i, _, ok = skipContent(data, j); !ok {
				return 0, false
			}
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

// plainRun returns the index of the first byte at or after j that is not
// plain string content, or len(data). It looks at a byte at a time, four
// to a round: most strings a message nests are a few bytes long, and then
// a byte at a time ends sooner than a word at a time, whose end waits for
// the word's load and test before the next string can start.
func plainRun(data []byte, j int) int {
	for j+4 <= len(data) {
		d := data[j : j+4]
		if !plain[d[0]] {
			return j
		}
		if !plain[d[1]] {
			return j + 1
		}
		if !plain[d[2]] {
			return j + 2
		}
		if !plain[d[3]] {
			return j + 3
		}
		j += 4
	}
	for j < len(data) && plain[data[j]] {
		j++
	}
	return j
}
