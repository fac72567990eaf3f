package sse

import (
	"bytes"
	"math"
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

// newLine splits raw, a line whose content is raw[:n], into its field name
// and value.
func newLine(raw []byte, n int) Line {
	content := raw[:n]
	if content[0] == ':' {
		return Line{Value: content[1:], Raw: raw, Comment: true}
	}
	i := bytes.IndexByte(content, ':')
	if i < 0 {
		return Line{Name: content, Value: content[n:], Raw: raw}
	}
	v := content[i+1:]
	if len(v) > 0 && v[0] == ' ' {
		v = v[1:]
	}
	return Line{Name: content[:i], Value: v, Raw: raw}
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
	*e = Event{Lines: e.Lines[:0], edit: e.edit[:0], scratch: e.scratch[:0]}
}

// interpret sets the client view from e.Lines, as a conforming client
// processes them.
func (e *Event) interpret() {
	e.Type, e.Data, e.ID = nil, nil, nil
	e.HasID, e.HasRetry, e.Retry, e.Dispatched = false, false, 0, false
	ndata := 0
	for i := range e.Lines {
		l := &e.Lines[i]
		if l.Comment || l.cut() {
			continue
		}
		switch string(l.Name) {
		case "data":
			if ndata == 0 {
				e.Data = l.Value
			}
			ndata++
		case "event":
			e.Type = l.Value
		case "id":
			if bytes.IndexByte(l.Value, 0) < 0 {
				e.ID, e.HasID = l.Value, true
			}
		case "retry":
			if ms, ok := parseRetry(l.Value); ok {
				e.Retry, e.HasRetry = ms, true
			}
		}
	}
	if ndata > 1 {
		e.joinData()
	}
	if ndata > 0 && e.Data == nil {
		e.Data = []byte{}
	}
	e.Dispatched = e.Complete && ndata > 0
}

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
