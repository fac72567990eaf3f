package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
)

// minRead is the initial buffer size and the slack the buffer may grow past
// the block limit, so that a block of exactly the limit still leaves room
// for a read.
const minRead = 4096

// maxEmptyReads bounds how many reads in a row may return neither bytes nor
// an error before the Reader gives up with io.ErrNoProgress, as bufio does.
const maxEmptyReads = 100

var bom = []byte{0xEF, 0xBB, 0xBF}

// errNoSource is returned by Next on a Reader that was never given a source.
var errNoSource = errors.New("sse: Reader has no source (use NewReader or Reset)")

// Reader reads an event stream one block at a time, from whatever pieces
// its source delivers, and keeps every byte: the Raw of the events it
// returns, concatenated, is exactly the stream it read.
//
// A line that ends in CR at the end of the bytes read so far is complete at
// once, so a block ended by such a line is returned without waiting for the
// next read. If the next read then starts with an LF, that LF is the second
// half of the CRLF; since the block is already gone it becomes the first byte
// of the next event's Raw, before its first line (an event that is only that
// LF, when the stream ends there, is returned with Complete false).
//
// Memory is bounded by the maximum block size: the buffer never grows past
// it by more than 4 KiB, and a block larger than that is not parsed; from
// then on the rest of the stream is returned in Unparsed events, each holding
// what one read delivered. Whether a block is parsed depends only on its
// size and its number of lines (at most one per 64 bytes of the limit, and
// at least 1024), not on how the reads broke. A Reader with nothing
// buffered, about to wait for its source, gives its buffer back to a pool
// shared by all Readers (unless a large block grew it) and waits for its
// source (a Waiter) or reads the first bytes to come into a small array of
// its own, so an idle stream holds no buffer; while data keeps coming, it
// reads into a larger pooled buffer (burst.go). Besides the
// buffer, a Reader keeps about 100 bytes per line of the current block (its
// Line and where it ends); the cap on lines keeps that within about twice
// the block limit, whatever the lines' length.
//
// The zero Reader has no source: call Reset before Next. A Reader is not safe
// for concurrent use.
type Reader struct {
	src io.Reader
	max int // largest block parsed, in bytes

	buf   []byte // buf[start:end] are the bytes read and not yet returned
	start int    // first byte of the current block
	end   int
	line  int // first byte of the line being scanned
	lf    seek
	cr    seek
	done  int // end of the event last returned; start moves there on Next

	spans     []span // lines of the current block, relative to start
	prefix    int    // bytes of the block before its first line
	hasBOM    bool   // the current block starts with the stream's BOM
	pendingLF bool   // the last line end was a CR at the end of the buffer
	begun     bool   // the check for a BOM at the start of the stream is done
	unparsed  bool   // the stream overflowed; pass the rest through raw
	err       error  // sticky error from the source

	waiter Waiter         // src, when it can wait without a buffer
	pool   int            // where buf came from (burst.go): a pooled one goes back when idle
	filled bool           // the last read filled the buffer
	more   bool           // the last read filled what it was offered: more is likely waiting
	small  [idleRead]byte // what an idle Reader reads into
	ev     Event
}

// A Waiter is a source that can wait for its next bytes without being
// handed a buffer to read them into. WaitRead returns once bytes have come
// (or the source has failed or ended): the Read after it does not wait for
// them. A Reader whose source is a Waiter waits there, holding no buffer,
// and then reads what came in one read into a pooled buffer; other sources
// end a wait with a read into the Reader's small array and read the rest
// of the event in a second read. An error from WaitRead ends the stream as
// one from Read would; a Waiter whose Read reports the failure better
// returns nil and leaves it to Read.
type Waiter interface {
	WaitRead() error
}

// idleRead is how many bytes the read that ends an idle wait takes: fewer
// than almost any event of the MCP traffic has, so that the read rarely
// completes one. The rest of a burst is then read with a pooled buffer, in
// the same fill, before fray has any event to flush: the whole burst leaves
// in one write to the client rather than two. Bytes that end the wait and
// complete no event cost one more read, from what the connection has
// already buffered.
const idleRead = 64

// bufPool holds the minRead-byte buffers of Readers that are waiting for
// their source with nothing buffered: a Reader holds a buffer only while it
// has bytes in it, so that thousands of idle streams hold none.
var bufPool = sync.Pool{New: func() any { return new([minRead]byte) }}

// NewReader returns a Reader of the event stream src that parses blocks of
// up to maxBlock bytes; maxBlock <= 0 means DefaultMaxBlock.
func NewReader(src io.Reader, maxBlock int) *Reader {
	r := &Reader{max: maxBlock}
	r.Reset(src)
	return r
}

// Reset makes r read a new stream from src, keeping its buffers and its
// maximum block size (DefaultMaxBlock for a zero Reader). Events returned
// before are no longer valid.
func (r *Reader) Reset(src io.Reader) {
	max := r.max
	if max <= 0 {
		max = DefaultMaxBlock
	}
	ev := r.ev
	ev.reset()
	*r = Reader{src: src, max: max, buf: r.buf, pool: r.pool, spans: r.spans[:0], ev: ev}
	r.waiter, _ = src.(Waiter)
}

// Next returns the next block of the stream. It returns io.EOF once the
// stream has ended and every byte has been returned, and any other error of
// the source as it is, after the blocks it had already buffered and then
// whatever bytes of a cut block remained (in an Event that is not Complete).
// Errors are sticky: once Next has returned one, it returns it again.
//
// The Event and its slices are valid until the next call to Next or Reset.
func (r *Reader) Next() (*Event, error) {
	if r.src == nil {
		return nil, errNoSource
	}
	r.consume()
	if r.unparsed {
		return r.nextUnparsed()
	}
	for {
		if !r.begun && !r.checkBOM() {
			r.fill()
			continue
		}
		end := r.scan()
		if end-r.start > r.max || end < 0 && r.end-r.start > r.max || len(r.spans) > r.maxLines() {
			return r.overflow(), nil
		}
		if end >= 0 {
			return r.finish(end, true), nil
		}
		if r.err != nil {
			if r.end > r.start {
				return r.finish(r.end, false), nil
			}
			return nil, r.err
		}
		r.fill()
	}
}

// consume drops the event last returned and starts a new block after it.
func (r *Reader) consume() {
	r.start = r.done
	r.line = r.done
	r.spans = r.spans[:0]
	r.prefix = 0
	r.hasBOM = false
}

// checkBOM strips a BOM at the very start of the stream. It reports false
// when it needs more bytes to decide.
func (r *Reader) checkBOM() bool {
	b := r.buf[r.start:r.end]
	if len(b) < len(bom) && bytes.HasPrefix(bom, b) && r.err == nil {
		return false
	}
	r.begun = true
	if bytes.HasPrefix(b, bom) {
		r.hasBOM = true
		r.prefix = len(bom)
		r.line += len(bom)
	}
	return true
}

// fill reads more bytes into the buffer, moving the current block to its
// start first and growing it when the block fills it. The caller makes sure
// the block is within the limit, so the buffer never grows past
// max + minRead.
func (r *Reader) fill() {
	if r.start > 0 {
		r.shift(r.start)
	}
	if r.end == 0 && !r.unparsed && r.mayWait() {
		if r.waiter == nil {
			r.fillIdle()
			return
		}
		// Wait with no buffer, then read what came in one read.
		r.releaseBuf()
		if err := r.waiter.WaitRead(); err != nil {
			r.err = err
			return
		}
		r.takeBuf()
	}
	r.widen()
	if r.end == len(r.buf) {
		r.grow()
	}
	for range maxEmptyReads {
		n, err := r.src.Read(r.buf[r.end:])
		if n < 0 || n > len(r.buf)-r.end {
			r.err = fmt.Errorf("sse: source returned an invalid count %d from Read", n)
			return
		}
		r.filled = n > 0 && n == len(r.buf)-r.end
		r.more = r.filled
		r.end += n
		if err != nil {
			r.err = err
			return
		}
		if n > 0 {
			return
		}
	}
	r.err = io.ErrNoProgress
}

// mayWait reports whether a read with nothing buffered may wait for long,
// and so is to be made without a buffer (a Waiter's wait, or fillIdle). A read that filled
// what it was offered (the buffer, or the small array) says that more
// bytes are waiting, so the next one will not wait: a busy stream reads
// straight into its buffer, not a first few bytes into the small array
// and then the rest, even when its reads end on an event's edge. A stream
// whose burst happens to end on that edge holds its buffer until its next
// bytes come.
func (r *Reader) mayWait() bool {
	if r.buf == nil {
		return true
	}
	return r.pool != ownBuf && !r.more
}

// fillIdle reads with nothing buffered, when the read may wait for long:
// the buffer goes back to the pool for the wait, the bytes that end it land
// in r.small, and a buffer is taken again only once there are bytes to
// keep. Unparsed streams skip it: each read there is an event of its own.
func (r *Reader) fillIdle() {
	r.releaseBuf()
	for range maxEmptyReads {
		n, err := r.src.Read(r.small[:])
		if n < 0 || n > len(r.small) {
			r.err = fmt.Errorf("sse: source returned an invalid count %d from Read", n)
			return
		}
		r.filled, r.more = false, n == len(r.small)
		if n > 0 {
			r.takeBuf()
			r.end = copy(r.buf, r.small[:n])
		}
		if err != nil {
			r.err = err
			return
		}
		if n > 0 {
			return
		}
	}
	r.err = io.ErrNoProgress
}

// shift moves the unconsumed bytes down by n, keeping every offset in step,
// so that no byte already scanned is scanned again.
func (r *Reader) shift(n int) {
	copy(r.buf, r.buf[n:r.end])
	r.start -= n
	r.end -= n
	r.line -= n
	r.lf.at -= n
	r.cr.at -= n
}

// grow doubles the buffer, up to max + minRead.
func (r *Reader) grow() {
	n := max(2*len(r.buf), minRead)
	n = min(n, r.max+minRead)
	if n <= len(r.buf) {
		return
	}
	buf := make([]byte, n)
	copy(buf, r.buf[:r.end])
	r.releaseBuf()
	r.buf = buf
}

// finish returns the block buf[start:end] as the Reader's Event.
func (r *Reader) finish(end int, complete bool) *Event {
	r.done = end
	e := &r.ev
	e.reset()
	e.Raw = r.buf[r.start:end]
	e.BOM = r.hasBOM
	e.Complete = complete
	e.prefix = r.prefix
	e.term = len(e.Raw)
	n := len(r.spans)
	from := r.prefix
	if !complete && r.line < end {
		n++ // the cut line
	}
	e.Lines = slices.Grow(e.Lines[:0], n)[:n]
	ndata := 0
	for i, s := range r.spans {
		l := &e.Lines[i]
		setLine(l, e.Raw[from:s.rawEnd], s.end-from)
		if !l.Comment {
			ndata = e.take(l, ndata)
		}
		from = s.rawEnd
	}
	if complete {
		e.term = from
	} else if from < len(e.Raw) {
		setLine(&e.Lines[n-1], e.Raw[from:], len(e.Raw)-from) // cut: a client never reads it
	}
	e.settle(ndata)
	e.eol = eolLF
	if len(r.spans) > 0 {
		s := r.spans[0]
		e.eol = styleOf(e.Raw[s.end:s.rawEnd])
	} else if complete {
		e.eol = styleOf(e.Raw[e.term:])
	}
	return e
}

// maxLines bounds the lines of a parsed block: one per 64 bytes of the
// block limit, and at least 1024, so that the bookkeeping of a block of
// many tiny lines (about 100 bytes a line) stays within about twice the
// block limit.
func (r *Reader) maxLines() int { return max(r.max/64, 1024) }

// overflow switches to passing the stream through unparsed and returns what
// is buffered of the block that was too large.
func (r *Reader) overflow() *Event {
	r.unparsed = true
	return r.rawEvent()
}

// nextUnparsed returns whatever the next read delivers.
func (r *Reader) nextUnparsed() (*Event, error) {
	r.start, r.end, r.done = 0, 0, 0
	if r.err == nil {
		r.fill()
	}
	if r.end == 0 {
		return nil, r.err
	}
	return r.rawEvent(), nil
}

// rawEvent returns buf[start:end] as an Unparsed event.
func (r *Reader) rawEvent() *Event {
	r.done = r.end
	e := &r.ev
	e.reset()
	e.Raw = r.buf[r.start:r.end]
	e.BOM = r.hasBOM
	e.Unparsed = true
	e.prefix = len(e.Raw)
	e.term = len(e.Raw)
	return e
}
