package sse

import "bytes"

// span is where a line ends in its block: the end of its content and the
// end of its line end, relative to the start of the block. A line starts
// where the previous one ended, or after the block's prefix.
type span struct {
	end, rawEnd int
}

// seek remembers where a byte was last found, or up to where it is known to
// be absent, so that a search never covers the same bytes twice: a stream of
// bare CRs must not make every line search the rest of the buffer for LF.
type seek struct {
	at    int
	found bool
}

// next returns the index of the first c in b at or after from, or -1.
func (s *seek) next(b []byte, from int, c byte) int {
	if s.at < from {
		s.at, s.found = from, false
	}
	if s.found {
		return s.at
	}
	if s.at >= len(b) {
		return -1
	}
	i := bytes.IndexByte(b[s.at:], c)
	if i < 0 {
		s.at = len(b)
		return -1
	}
	s.at += i
	s.found = true
	return s.at
}

// scan reads lines of the current block from the buffered bytes and returns
// the offset just past the empty line that ends the block, or -1 when the
// buffer holds no such line yet. It resumes where it stopped.
func (r *Reader) scan() int {
	for r.line < r.end {
		if r.pendingLF {
			r.pendingLF = false
			if r.buf[r.line] == '\n' {
				r.swallowLF()
				continue
			}
		}
		i := r.eol()
		if i < 0 {
			return -1
		}
		next := i + 1
		if r.buf[i] == '\r' {
			if next == r.end {
				r.pendingLF = true
			} else if r.buf[next] == '\n' {
				next++
			}
		}
		if i == r.line {
			r.line = next
			return next
		}
		r.spans = append(r.spans, span{end: i - r.start, rawEnd: next - r.start})
		r.line = next
	}
	return -1
}

// swallowLF takes an LF that follows a CR ending the previous read as the
// rest of that line end: of the last line if the block has one, else of the
// previous block, already returned, in which case the LF is kept as the
// block's prefix.
func (r *Reader) swallowLF() {
	r.line++
	if n := len(r.spans); n > 0 {
		r.spans[n-1].rawEnd++
	} else {
		r.prefix++
	}
}

// eol returns the index of the first CR or LF at or after the current line,
// or -1.
func (r *Reader) eol() int {
	b := r.buf[:r.end]
	lf := r.lf.next(b, r.line, '\n')
	cr := r.cr.next(b, r.line, '\r')
	if cr >= 0 && (lf < 0 || cr < lf) {
		return cr
	}
	return lf
}
