package sse

import "fmt"

// RemoveField removes every line whose field name is exactly name, a bare
// name without a colon included; comments are never removed. It returns how
// many lines it removed and, if any, updates the client view to what a
// client now sees. Removing the id lines of a block changes the last event id
// a client will send on reconnection. RemoveField does nothing to an
// Unparsed event.
func (e *Event) RemoveField(name string) int {
	first := e.index(name)
	if first < 0 {
		return 0 // the usual case on the hot path: nothing to copy
	}
	n := len(e.Lines)
	e.Lines = e.drop(first, name)
	e.modified = true
	e.interpret()
	return n - len(e.Lines)
}

// SetField sets the field name to value: the first line named name is
// replaced and the others of that name are removed; when there is none, the
// line is added at the end of the block, before the empty line that ends it
// (and before a cut last line). A data value containing line ends is
// written as several data lines, so that the client's Data is value with
// each CR, LF or CRLF read as LF. Any other field cannot carry a line end:
// its value is cut at the first CR or LF. The client view is updated.
//
// SetField panics if name is empty or holds a colon, CR or LF, since such a
// line would read as a comment or as another field. It does nothing to an
// Unparsed event, nor to an event that is no block at all: one that is cut
// by the end of the stream with no line in it, holding only a BOM or the LF
// that completed the previous block's CR.
func (e *Event) SetField(name string, value []byte) {
	if !validName(name) {
		panic(fmt.Sprintf("sse: SetField: invalid field name %q", name))
	}
	if e.Unparsed || !e.Complete && len(e.Lines) == 0 {
		return
	}
	at := e.index(name)
	if at >= 0 {
		e.Lines = e.drop(at, name)
	} else {
		at = len(e.Lines)
		if at > 0 && e.Lines[at-1].cut() {
			at--
		}
	}
	if name != "data" {
		if i := indexLineEnd(value); i >= 0 {
			value = value[:i]
		}
	}
	e.insert(at, name, value)
	e.modified = true
	e.interpret()
}

// validName reports whether name can be written as a field name.
func validName(name string) bool {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c == ':' || c == '\r' || c == '\n' {
			return false
		}
	}
	return name != ""
}

// index returns the index of the first line named name, or -1.
func (e *Event) index(name string) int {
	for i := range e.Lines {
		if l := &e.Lines[i]; !l.Comment && string(l.Name) == name {
			return i
		}
	}
	return -1
}

// drop returns e.Lines without the lines named name, the first of which is
// at index first.
func (e *Event) drop(first int, name string) []Line {
	kept := e.Lines[:first]
	for i := first + 1; i < len(e.Lines); i++ {
		if l := &e.Lines[i]; l.Comment || string(l.Name) != name {
			kept = append(kept, *l)
		}
	}
	clear(e.Lines[len(kept):])
	return kept
}

// insert adds the lines of name: value at index at, one per line of value,
// copying name and value into e.edit so that they outlive the caller's slice.
func (e *Event) insert(at int, name string, value []byte) {
	start := len(e.edit)
	e.edit = append(e.edit, name...)
	e.edit = append(e.edit, value...)
	nameB := e.edit[start : start+len(name) : start+len(name)]
	value = e.edit[start+len(name):]

	n := 1 + countLineEnds(value)
	old := len(e.Lines)
	e.Lines = append(e.Lines, make([]Line, n)...)
	copy(e.Lines[at+n:], e.Lines[at:old])
	for i := range n {
		v, rest := value, []byte(nil)
		if j := indexLineEnd(value); j >= 0 {
			v, rest = value[:j], value[j+1:]
			if value[j] == '\r' && len(rest) > 0 && rest[0] == '\n' {
				rest = rest[1:]
			}
		}
		e.Lines[at+i] = Line{Name: nameB, Value: v[:len(v):len(v)]}
		value = rest
	}
}

// countLineEnds counts the CR, LF and CRLF line ends in b.
func countLineEnds(b []byte) int {
	n := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '\n':
			n++
		case '\r':
			n++
			if i+1 < len(b) && b[i+1] == '\n' {
				i++
			}
		}
	}
	return n
}
