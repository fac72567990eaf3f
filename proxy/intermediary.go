package proxy

import (
	"sync"
	"time"

	"github.com/frayproxy/fray/faults"
)

// What the pump does for the faults that imitate intermediaries: an idle
// timeout (StreamAction.CloseIdle) and a buffering proxy
// (EventAction.Buffer). The decisions are the faults'; this is their I/O.

// idleTimer ends a stream once silence has passed since its last read.
// Reads only note their time; the timer, when it fires, asks
// faults.IdleExpired whether the silence is whole and otherwise waits the
// rest, so that a busy stream costs no timer per read. It is safe for
// concurrent use: the pump touches it, the clock's goroutine fires it.
type idleTimer struct {
	mu      sync.Mutex
	clock   Clock
	silence time.Duration
	last    time.Time
	stop    func() bool
	done    bool
	fire    func()
}

// armIdle starts the stream's idle timer; fire ends the stream.
func (pm *pump) armIdle(silence time.Duration) {
	t := &idleTimer{clock: pm.p.clock, silence: silence, last: pm.p.clock.Now(), fire: func() { pm.cancel(errFaultClosed) }}
	pm.idle = t
	t.mu.Lock()
	t.stop = t.clock.AfterFunc(silence, t.check)
	t.mu.Unlock()
}

// touch notes a read at now.
func (t *idleTimer) touch(now time.Time) {
	t.mu.Lock()
	if now.After(t.last) {
		t.last = now
	}
	t.mu.Unlock()
}

func (t *idleTimer) check() {
	t.mu.Lock()
	if t.done {
		t.mu.Unlock()
		return
	}
	if wait := faults.IdleExpired(t.silence, t.last, t.clock.Now()); wait > 0 {
		t.stop = t.clock.AfterFunc(wait, t.check)
		t.mu.Unlock()
		return
	}
	t.done = true
	t.mu.Unlock()
	t.fire()
}

// end stops the timer for good.
func (t *idleTimer) end() {
	t.mu.Lock()
	t.done = true
	if t.stop != nil {
		t.stop()
	}
	t.mu.Unlock()
}

// keep holds b back instead of writing it (a buffered event).
func (pm *pump) keep(b []byte) { pm.buffered = append(pm.buffered, b...) }

// release writes what is held, ahead of what comes next; it reports
// whether the client is still there.
func (pm *pump) release() bool {
	if len(pm.buffered) == 0 {
		return true
	}
	_, err := pm.w.Write(pm.buffered)
	pm.buffered = pm.buffered[:0]
	if err != nil {
		pm.cancel(err)
		return false
	}
	pm.pending = true
	return true
}

// flushAll releases what is held and flushes: the stream's end, however
// it came, lets a buffer go.
func (pm *pump) flushAll() {
	if len(pm.buffered) > 0 && pm.r.Context().Err() == nil {
		pm.release()
	}
	_ = pm.flush()
}
