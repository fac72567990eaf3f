package sse

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"
)

// eolStyle is a block's line-end style.
type eolStyle uint8

const (
	eolLF eolStyle = iota
	eolCR
	eolCRLF
)

var eolBytes = [...]string{eolLF: "\n", eolCR: "\r", eolCRLF: "\r\n"}

// styleOf returns the style of the line end that starts b.
func styleOf(b []byte) eolStyle {
	switch {
	case len(b) >= 2 && b[0] == '\r' && b[1] == '\n':
		return eolCRLF
	case len(b) >= 1 && b[0] == '\r':
		return eolCR
	}
	return eolLF
}

// setLine sets l to the line raw, whose content is raw[:n], split into its
// field name and value. It writes through a pointer, field by field, since
// copying whole Lines into the reused slice costs more than the parse.
func setLine(l *Line, raw []byte, n int) {
	content := raw[:n]
	l.Raw = raw
	if content[0] == ':' {
		l.Name, l.Value, l.Comment = nil, content[1:], true
		return
	}
	l.Comment = false
	i := colon(content)
	if i < 0 {
		l.Name, l.Value = content, content[n:]
		return
	}
	v := content[i+1:]
	if len(v) > 0 && v[0] == ' ' {
		v = v[1:]
	}
	l.Name, l.Value = content[:i], v
}

// colon returns the index of the first colon in b, or -1. Field names are
// short, so the first word of the line is tested at once rather than paying
// for a call of bytes.IndexByte, which costs more than most names are long.
func colon(b []byte) int {
	if len(b) < 8 {
		return bytes.IndexByte(b, ':')
	}
	x := binary.LittleEndian.Uint64(b) ^ ones*':'
	if m := (x - ones) &^ x & highs; m != 0 {
		return bits.TrailingZeros64(m) / 8
	}
	if i := bytes.IndexByte(b[8:], ':'); i >= 0 {
		return 8 + i
	}
	return -1
}

// hasNUL reports whether b holds a NUL byte. Ids are short, and for them a
// word at a time beats a call of bytes.IndexByte.
func hasNUL(b []byte) bool {
	if len(b) > 64 {
		return bytes.IndexByte(b, 0) >= 0
	}
	for ; len(b) >= 8; b = b[8:] {
		if w := binary.LittleEndian.Uint64(b); (w-ones)&^w&highs != 0 {
			return true
		}
	}
	for _, c := range b {
		if c == 0 {
			return true
		}
	}
	return false
}

// cut reports whether l is the last line of a stream that ended before the
// line's end: a client never reads it.
func (l *Line) cut() bool {
	if l.Raw == nil {
		return false
	}
	c := l.Raw[len(l.Raw)-1]
	return c != '\n' && c != '\r'
}

// reset empties e, keeping its reusable buffers.
func (e *Event) reset() {
	e.Raw, e.Lines, e.edit, e.scratch = nil, e.Lines[:0], e.edit[:0], e.scratch[:0]
	e.Type, e.Data, e.ID = nil, nil, nil
	e.HasID, e.HasRetry, e.Retry, e.Dispatched = false, false, 0, false
	e.Complete, e.Unparsed, e.BOM, e.modified = false, false, false, false
	e.prefix, e.term, e.eol = 0, 0, eolLF
}

// interpret sets the client view from e.Lines, as a conforming client
// processes them.
func (e *Event) interpret() {
	e.Type, e.Data, e.ID = nil, nil, nil
	e.HasID, e.HasRetry, e.Retry, e.Dispatched = false, false, 0, false
	ndata := 0
	for i := range e.Lines {
		if l := &e.Lines[i]; !l.Comment && !l.cut() {
			ndata = e.take(l, ndata)
		}
	}
	e.settle(ndata)
}

// take applies the field of line l to the client view, given how many data
// lines came before it, and returns how many have come now.
func (e *Event) take(l *Line, ndata int) int {
	switch string(l.Name) {
	case "data":
		if ndata == 0 {
			e.Data = l.Value
		}
		return ndata + 1
	case "event":
		e.Type = l.Value
	case "id":
		if !hasNUL(l.Value) {
			e.ID, e.HasID = l.Value, true
		}
	case "retry":
		if ms, ok := parseRetry(l.Value); ok {
			e.Retry, e.HasRetry = ms, true
		}
	}
	return ndata
}

// settle finishes the client view once every line is taken.
func (e *Event) settle(ndata int) {
	if ndata > 1 {
		e.joinData()
	}
	if ndata > 0 && e.Data == nil {
		e.Data = noData
	}
	e.Dispatched = e.Complete && ndata > 0
}

// noData is the Data of a block whose data lines join to the empty string:
// empty, but not nil, which would mean no data line at all.
var noData = []byte{}

// joinData joins the values of the data lines into the scratch buffer, so
// that Data points into the Reader's buffer whenever there is one data line.
func (e *Event) joinData() {
	b := e.scratch[:0]
	first := true
	for i := range e.Lines {
		l := &e.Lines[i]
		if l.Comment || l.cut() || string(l.Name) != "data" {
			continue
		}
		if !first {
			b = append(b, '\n')
		}
		first = false
		b = append(b, l.Value...)
	}
	e.scratch = b
	e.Data = b
}

// parseRetry parses a retry value: ASCII digits only, at least one. A value
// too large for int64 saturates, since a client waits "very long" either way.
func parseRetry(v []byte) (int64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		if n > (math.MaxInt64-d)/10 {
			n = math.MaxInt64
			continue
		}
		n = n*10 + d
	}
	return n, true
}
