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
// levels further.
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
			if i, ok = skipKey(data, i); !ok {
				return 0, false
			}
			if i = skipSpace(data, i); i >= len(data) {
				return 0, false
			}
		}
		switch c := data[i]; {
		case c == '{' || c == '[':
			i, ok = skipNested(data, i, depth+1, left-1)
		case c == '"':
			i, _, ok = skipString(data, i)
		case c == '-' || isDigit(c):
			i, ok = skipNumber(data, i)
		default:
			i, ok = skipScalar(data, i)
		}
		if !ok {
			return 0, false
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
