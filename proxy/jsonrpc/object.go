package jsonrpc

// member is one name/value pair of an object. Key is the name's content
// between its quotes; Value is the value's raw JSON.
type member struct {
	Key      []byte
	KeyFlags uint8
	Value    []byte
	// ValueFlags are the string flags when Value is a string.
	ValueFlags uint8
}

// members walks the members of one object, checking the JSON as it goes.
// Nested values are skipped, not looked into.
type members struct {
	data  []byte
	i     int // the next member's key, or the closing brace
	depth int // nesting depth of the object itself
	// end is the index just past the closing brace once next has returned
	// false with ok set.
	end  int
	ok   bool
	done bool
}

// openObject starts a walk of the object that opens at data[i].
func openObject(data []byte, i, depth int) members {
	var it members
	it.open(data, i, depth)
	return it
}

// open starts it on the object that opens at data[i]. (Set in place: a
// walk on the per-event path is spared the copy of a returned one.)
func (it *members) open(data []byte, i, depth int) {
	*it = members{data: data, depth: depth}
	if depth > maxDepth {
		it.done = true
		return
	}
	it.i = skipSpace(data, i+1)
	if it.i < len(data) && data[it.i] == '}' {
		it.done, it.ok, it.end = true, true, it.i+1
	}
}

// next reads the next member into m. It returns false at the end of the
// object (it.ok is then set) and on invalid JSON (it.ok is then unset).
// (Filling m in place spares a copy of it per member.)
func (it *members) next(m *member) (more bool) {
	if it.done {
		return false
	}
	it.done = true // until proven otherwise
	m.ValueFlags = 0
	data, i := it.data, it.i
	if i >= len(data) || data[i] != '"' {
		return false
	}
	end, flags, ok := skipString(data, i)
	if !ok {
		return false
	}
	m.Key, m.KeyFlags = data[i+1:end-1], flags
	i = skipSpace(data, end)
	if i >= len(data) || data[i] != ':' {
		return false
	}
	i = skipSpace(data, i+1)
	if i >= len(data) {
		return false
	}
	start := i
	switch data[i] {
	case '{', '[':
		i, ok = skipComposite(data, i, it.depth+1)
	case '"':
		i, m.ValueFlags, ok = skipString(data, i)
	default:
		i, ok = skipScalar(data, i)
	}
	if !ok {
		return false
	}
	m.Value = data[start:i]
	i = skipSpace(data, i)
	if i >= len(data) {
		return false
	}
	switch data[i] {
	case ',':
		it.i, it.done = skipSpace(data, i+1), false
	case '}':
		it.ok, it.end = true, i+1
	default:
		return false
	}
	return true
}

// Lookup returns the raw JSON of the member named key of the object obj
// (which may be surrounded by whitespace), or nil when obj has no such
// member or is not a valid JSON object. Names are compared after decoding
// their escapes, and the last of duplicate members wins, as encoding/json
// does. Lookup looks at the top level of obj only and does not allocate.
func Lookup(obj []byte, key string) []byte {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil
	}
	it := openObject(obj, i, 1)
	var found []byte
	var m member
	for it.next(&m) {
		if equalString(m.Key, m.KeyFlags, key) {
			found = m.Value
		}
	}
	if !it.ok || skipSpace(obj, it.end) != len(obj) {
		return nil
	}
	return found
}
