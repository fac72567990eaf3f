package forward

import "sync"

// The gathering buffer bounds what the pump gathers before writing it to
// the client: the events of one read from the upstream leave in one write,
// rather than one write per event through net/http's small buffers (2 KiB
// for the response, 4 KiB for the connection), which cost one system call
// per 4 KiB. It is as large as one read of the stream's reader can deliver
// (sse.Reader.Room): gatherSmall while the reader reads 4 KiB at a time (a
// paced stream, or each of ten thousand quiet ones, which then hold 4 KiB
// while they write rather than 32), gatherSize once a burst widens its
// reads, and gatherBulk, as much as the reader's largest pooled read, for
// a stream in bulk: the write to the client is as large as the read, one
// system call per read. A sink with no reader yet takes gatherSize.
const (
	gatherSmall = 4 << 10
	gatherSize  = 32 << 10
	gatherBulk  = 128 << 10
)

// The pools hold the gathering buffers of sinks that have flushed, one
// pool per size: a stream holds one only between its first write after a
// flush and the next flush, so an idle stream holds none.
var (
	gatherSmallPool = sync.Pool{New: func() any { b := make([]byte, 0, gatherSmall); return &b }}
	gatherPool      = sync.Pool{New: func() any { b := make([]byte, 0, gatherSize); return &b }}
	gatherBulkPool  = sync.Pool{New: func() any { b := make([]byte, 0, gatherBulk); return &b }}
)

// takeGather takes a gathering buffer as large as one read of the
// stream's reader can deliver.
func (s *sink) takeGather() *[]byte {
	switch {
	case s.rd == nil:
		return gatherPool.Get().(*[]byte)
	case s.rd.Room() > gatherSize:
		return gatherBulkPool.Get().(*[]byte)
	case s.rd.Room() > gatherSmall:
		return gatherPool.Get().(*[]byte)
	}
	return gatherSmallPool.Get().(*[]byte)
}

// putGather gives g back to the pool it came from.
func putGather(g *[]byte) {
	*g = (*g)[:0]
	switch cap(*g) {
	case gatherBulk:
		gatherBulkPool.Put(g)
	case gatherSmall:
		gatherSmallPool.Put(g)
	default:
		gatherPool.Put(g)
	}
}

// send writes b to the client by way of the gathering buffer: the bytes go
// out, in order, at the next flush (or once the buffer is full).
// It returns the error of a write it made.
func (s *sink) send(b []byte) error {
	s.pending = true
	if s.gather == nil {
		s.gather = s.takeGather()
	}
	g := *s.gather
	if len(g)+len(b) > cap(g) {
		if err := s.drain(); err != nil {
			return err
		}
		if len(b) >= cap(g) {
			_, err := s.w.Write(b)
			return err
		}
		s.gather = s.takeGather()
		g = *s.gather
	}
	*s.gather = append(g, b...)
	return nil
}

// drain writes what was gathered to the response, the recorder flushed
// first, and gives the buffer back to its pool.
func (s *sink) drain() error {
	if s.gather == nil {
		return nil
	}
	s.rec.flush()
	g := s.gather
	s.gather = nil
	var err error
	if len(*g) > 0 {
		_, err = s.w.Write(*g)
	}
	putGather(g)
	return err
}

// clientWriteError is a write or flush to the client that failed, as the
// SSE reader hands it back from its source (beforeRead): the stream ends
// because the client is gone, not because the upstream failed. It matters
// now that events leave at the flush rather than at their own write.
type clientWriteError struct{ err error }

func (e *clientWriteError) Error() string { return "proxy: writing to the client: " + e.err.Error() }

func (e *clientWriteError) Unwrap() error { return e.err }
