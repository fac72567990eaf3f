package forward

import (
	"bytes"
	"slices"
	"sync"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/sse"
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

// MaxBuffered bounds the bytes a buffer fault holds on one stream (or one
// --max-block, when that is larger): the event that would take it past
// releases what is held first, then is held itself.
const MaxBuffered = 4 << 20

// keep holds b back instead of writing it (a buffered event).
func (pm *pump) keep(b []byte) { pm.buffered = append(pm.buffered, b...) }

// release writes what is held, ahead of what comes next, and reports
// the held events as delivered now; it reports whether the client is
// still there.
func (pm *pump) release() bool {
	if len(pm.buffered) == 0 {
		return true
	}
	err := pm.send(pm.buffered)
	pm.buffered = pm.buffered[:0]
	if err != nil {
		pm.reportHeld(false)
		pm.cancel(err)
		return false
	}
	pm.reportHeld(true)
	return true
}

// flushAll releases what is held and flushes: the stream's end, however
// it came, lets a buffer go. What a client that went away never got is
// reported undelivered.
func (pm *pump) flushAll() {
	if len(pm.buffered) > 0 && pm.r.Context().Err() == nil {
		pm.release()
	}
	pm.buffered = pm.buffered[:0]
	pm.reportHeld(false)
	_ = pm.flush()
}

// heldObservation is a held event's observation, kept until the event
// leaves: an observer must not take an event for delivered while fray
// holds it, nor at all if the client never gets it.
type heldObservation struct {
	ev    observe.Event
	fired []faults.Firing
	at    time.Duration // when it was read, since the proxy started
}

// holdObservation keeps the observation of a held event, as observeEvent
// would make it, with its bytes copied (the reader reuses its own).
func (pm *pump) holdObservation(e *sse.Event, out outcome, fired []faults.Firing) {
	if !pm.p.observing() {
		return
	}
	at := pm.describeEvent(e, out)
	o := pm.current().oev
	for _, b := range []*[]byte{&o.Raw, &o.Type, &o.ID, &o.Data, &o.RPCMethod, &o.RPCID, &o.Delivered, &o.DeliveredID} {
		*b = bytes.Clone(*b)
	}
	pm.heldObs = append(pm.heldObs, heldObservation{ev: o, fired: slices.Clone(fired), at: at})
}

// reportHeld reports the held events: delivered now, or, when the client
// went away first, undelivered.
func (pm *pump) reportHeld(delivered bool) {
	now := pm.p.clock.Now().Sub(pm.p.start)
	for i := range pm.heldObs {
		h := &pm.heldObs[i]
		if delivered {
			h.ev.DeliveredAt = now
		} else {
			h.ev.Fate, h.ev.DeliveredAt = observe.Undelivered, 0
		}
		pm.emitEvent(&h.ev, h.fired, h.at)
	}
	pm.heldObs = pm.heldObs[:0]
}
