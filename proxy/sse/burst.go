package sse

import "sync"

// burstRead is the size of the buffer a Reader reads into while data keeps
// coming: once a read fills the minRead-byte buffer, the next reads take up
// to this many bytes at a time, so that a busy stream costs one read per
// burstRead bytes rather than per minRead, as io.Copy's 32 KiB does. The
// buffer goes back to its pool when the stream next waits with nothing
// buffered, so an idle stream holds none.
const burstRead = 32 << 10

// burstPool holds the burstRead-byte buffers of Readers between bursts.
var burstPool = sync.Pool{New: func() any { return new([burstRead]byte) }}

// Where a Reader's buffer came from, and so where it goes back.
const (
	ownBuf   = iota // allocated by grow, or none: kept
	smallBuf        // from bufPool (minRead bytes)
	largeBuf        // from burstPool (burstRead bytes)
)

// widen swaps a full pooled minRead-byte buffer for a burstRead-byte one
// when the last read filled it: more is likely waiting. A Reader whose block
// limit is below burstRead keeps to its bound and grows as before.
func (r *Reader) widen() {
	if r.pool != smallBuf || !r.filled || r.max+minRead < burstRead {
		return
	}
	big := burstPool.Get().(*[burstRead]byte)[:]
	n := copy(big, r.buf[:r.end])
	r.releaseBuf()
	r.buf, r.end, r.pool = big, n, largeBuf
}

// releaseBuf gives a pooled buffer back; a grown one is kept, since the
// stream that grew it may well need it again.
func (r *Reader) releaseBuf() {
	switch r.pool {
	case smallBuf:
		bufPool.Put((*[minRead]byte)(r.buf))
	case largeBuf:
		burstPool.Put((*[burstRead]byte)(r.buf))
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
