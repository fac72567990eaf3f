package sse

// AppendTo appends the block to dst and returns the extended slice.
//
// An event that no mutating method changed, and every Unparsed event, is
// written as Raw, byte for byte. A changed event is written in canonical
// form: its prefix (the stream's BOM, or an LF completing the previous
// block's CR), each line left as read in its raw bytes, each line set by
// SetField as "name: value" and the block's line-end style (that of its
// first line end, LF when it has none), then the empty line that ended the
// block as read. If a removal leaves a bare CR line end right before an LF
// empty line, a client would read the two as one CRLF and miss the end of
// the block, so an LF is added between them.
//
// The BOM belongs to the first event of a stream: a caller that writes that
// event anywhere but at the start of its output should drop the BOM.
func (e *Event) AppendTo(dst []byte) []byte {
	if !e.modified || e.Unparsed {
		return append(dst, e.Raw...)
	}
	dst = append(dst, e.Raw[:e.prefix]...)
	mark := len(dst)
	eol := eolBytes[e.eol]
	for i := range e.Lines {
		l := &e.Lines[i]
		if l.Raw != nil {
			dst = append(dst, l.Raw...)
			continue
		}
		dst = append(dst, l.Name...)
		dst = append(dst, ':', ' ')
		dst = append(dst, l.Value...)
		dst = append(dst, eol...)
	}
	term := e.Raw[e.term:]
	if len(term) > 0 && term[0] == '\n' && len(dst) > mark && dst[len(dst)-1] == '\r' {
		dst = append(dst, '\n')
	}
	return append(dst, term...)
}
