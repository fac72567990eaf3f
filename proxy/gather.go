package proxy

import "sync"

// gatherSize bounds what the pump gathers before writing it to the client:
// the events of one read from the upstream (up to the SSE reader's 32 KiB)
// leave in one write, rather than one write per event through net/http's
// small buffers (2 KiB for the response, 4 KiB for the connection), which
// cost one system call per 4 KiB.
const gatherSize = 32 << 10

// gatherPool holds the gathering buffers of pumps that have flushed: a
// stream holds one only between its first write after a flush and the next
// flush, so an idle stream holds none.
var gatherPool = sync.Pool{New: func() any { b := make([]byte, 0, gatherSize); return &b }}

// send writes b to the client by way of the gathering buffer: the bytes go
// out, in order, at the next flush (or once gatherSize bytes are waiting).
// It returns the error of a write it made.
func (pm *pump) send(b []byte) error {
	pm.pending = true
	if pm.gather == nil {
		pm.gather = gatherPool.Get().(*[]byte)
	}
	g := *pm.gather
	if len(g)+len(b) > cap(g) {
		if err := pm.drain(); err != nil {
			return err
		}
		if len(b) >= gatherSize {
			_, err := pm.w.Write(b)
			return err
		}
		pm.gather = gatherPool.Get().(*[]byte)
		g = *pm.gather
	}
	*pm.gather = append(g, b...)
	return nil
}

// drain writes what was gathered to the response and gives the buffer back
// to its pool.
func (pm *pump) drain() error {
	if pm.gather == nil {
		return nil
	}
	// The observers have every event before the client can, and no Stage
	// is held while the write may block.
	pm.releaseStage()
	g := pm.gather
	pm.gather = nil
	var err error
	if len(*g) > 0 {
		_, err = pm.w.Write(*g)
	}
	*g = (*g)[:0]
	gatherPool.Put(g)
	return err
}

// clientWriteError is a write or flush to the client that failed, as the
// SSE reader hands it back from its source (timedRead): the stream ends
// because the client is gone, not because the upstream failed. It matters
// now that events leave at the flush rather than at their own write.
type clientWriteError struct{ err error }

func (e *clientWriteError) Error() string { return "proxy: writing to the client: " + e.err.Error() }

func (e *clientWriteError) Unwrap() error { return e.err }
