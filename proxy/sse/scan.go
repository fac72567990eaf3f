package sse

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// shortLine is how many bytes of a line eol tests a word at a time before
// it calls bytes.IndexByte.
const shortLine = 16

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// lineEnds returns a mask whose lowest set bit is the high bit of the first
// byte of w (in memory order) that is CR or LF, or 0 when there is none.
// Bits above it may be set spuriously by borrows; the lowest never is.
func lineEnds(w uint64) uint64 {
	lf := w ^ ones*'\n'
	cr := w ^ ones*'\r'
	return (lf-ones)&^lf&highs | (cr-ones)&^cr&highs
}

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

// indexLineEnd returns the index of the first CR or LF in b, or -1.
func indexLineEnd(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		if m := lineEnds(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(b); i++ {
		if b[i] == '\n' || b[i] == '\r' {
			return i
		}
	}
	return -1
}

// scan reads lines of the current block from the buffered bytes and returns
// the offset just past the empty line that ends the block, or -1 when the
// buffer holds no such line yet. It resumes where it stopped.
func (r *Reader) scan() int {
	b := r.buf[:r.end]
	if r.pendingLF && r.line < len(b) {
		r.pendingLF = false
		if b[r.line] == '\n' {
			r.swallowLF()
		}
	}
	for line := r.line; line < len(b); {
		i := r.eol(b, line)
		if i < 0 {
			r.line = line
			return -1
		}
		next := i + 1
		if b[i] == '\r' {
			if next == len(b) {
				r.pendingLF = true
			} else if b[next] == '\n' {
				next++
			}
		}
		if i == line {
			r.line = next
			return next
		}
		r.spans = append(r.spans, span{end: i - r.start, rawEnd: next - r.start})
		line = next
		if len(r.spans) > r.maxLines() {
			r.line = line // Next sees the overflow
			return -1
		}
	}
	r.line = len(b)
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

// eol returns the index of the first CR or LF in b at or after from, or -1.
//
// Most lines of an event stream are short, where a call of bytes.IndexByte
// for each of CR and LF costs more than the search itself, so the first
// words of the line are tested eight bytes at a time for either byte.
// Longer lines go on with the seeks, from where the words stopped.
func (r *Reader) eol(b []byte, from int) int {
	for end := from + shortLine; from+8 <= len(b) && from < end; from += 8 {
		if m := lineEnds(binary.LittleEndian.Uint64(b[from:])); m != 0 {
			return from + bits.TrailingZeros64(m)/8
		}
	}
	lf := r.lf.next(b, from, '\n')
	if !r.cr.found && r.cr.at >= len(b) {
		return lf // no CR left in b: the common LF-only stream
	}
	if cr := r.cr.next(b, from, '\r'); cr >= 0 && (lf < 0 || cr < lf) {
		return cr
	}
	return lf
}
