package sse

import "sync"

// While data keeps coming, a Reader reads into larger buffers, one step at
// a time: once a read fills the minRead-byte buffer, the next reads take up
// to burstRead bytes, as io.Copy's 32 KiB does; once one of those fills
// too, up to bulkRead bytes. A stream that bursts costs one read per
// burstRead bytes, and one that streams in bulk (an upstream replaying a
// backlog, a token stream) one per bulkRead, with the write to the client
// that follows each read as large (the proxy gathers the events of one
// read into one write). A larger buffer is taken only when the last read
// filled the one before, and goes back to its pool when the stream next
// waits with nothing buffered, so an idle stream holds none and a paced
// one rarely more than minRead.
const (
	burstRead = 32 << 10
	bulkRead  = 128 << 10
)

// burstPool and bulkPool hold the larger buffers of Readers between bursts.
var (
	burstPool = sync.Pool{New: func() any { return new([burstRead]byte) }}
	bulkPool  = sync.Pool{New: func() any { return new([bulkRead]byte) }}
)

// Where a Reader's buffer came from, and so where it goes back.
const (
	ownBuf   = iota // allocated by grow, or none: kept
	smallBuf        // from bufPool (minRead bytes)
	largeBuf        // from burstPool (burstRead bytes)
	bulkBuf         // from bulkPool (bulkRead bytes)
)

// widen swaps a full pooled buffer for the next larger one when the last
// read filled it: more is likely waiting. A Reader keeps to its block
// limit: it takes no pooled buffer larger than the limit plus minRead (it
// grows as before instead), so its memory bound holds.
func (r *Reader) widen() {
	if !r.filled {
		return
	}
	var next []byte
	switch {
	case r.pool == smallBuf && r.max+minRead >= burstRead:
		next = burstPool.Get().(*[burstRead]byte)[:]
	case r.pool == largeBuf && r.max+minRead >= bulkRead:
		next = bulkPool.Get().(*[bulkRead]byte)[:]
	default:
		return
	}
	pool := r.pool + 1 // the pools are numbered from the smallest buffer up
	n := copy(next, r.buf[:r.end])
	r.releaseBuf()
	r.buf, r.end, r.pool = next, n, pool
}

// releaseBuf gives a pooled buffer back; a grown one is kept, since the
// stream that grew it may well need it again.
func (r *Reader) releaseBuf() {
	switch r.pool {
	case smallBuf:
		bufPool.Put((*[minRead]byte)(r.buf))
	case largeBuf:
		burstPool.Put((*[burstRead]byte)(r.buf))
	case bulkBuf:
		bulkPool.Put((*[bulkRead]byte)(r.buf))
	default:
		return
	}
	r.buf, r.pool = nil, ownBuf
}

// takeBuf gives the Reader a pooled buffer when it has none.
func (r *Reader) takeBuf() {
	if r.buf == nil {
		r.buf, r.pool = bufPool.Get().(*[minRead]byte)[:], smallBuf
	}
}

// Room is the size of the buffer the Reader reads into now, and so the
// most one read can deliver: 0 while it waits holding none, minRead for a
// paced stream, more while a burst widens it or a large block grows it. A
// proxy sizes what it gathers for one write by it.
func (r *Reader) Room() int { return len(r.buf) }
