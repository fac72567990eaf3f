package observe

import (
	"time"

	"github.com/frayproxy/fray/proxy/sse"
)

// SetBlock clears e and sets it to the view of b, a parsed block, the
// index-th of its stream, read at sinceStream into it and sinceRun into
// the run: the block's fields, with no JSON-RPC identity and no fate yet.
func (e *Event) SetBlock(index int, b *sse.Event, sinceStream, sinceRun time.Duration) {
	// Cleared, then set field by field, in place: a composite literal
	// would be built aside and copied over, twice the stores.
	*e = Event{}
	e.Index, e.Raw, e.Parsed = index, b.Raw, true
	e.Type, e.ID, e.HasID, e.Retry, e.HasRetry = b.Type, b.ID, b.HasID, b.Retry, b.HasRetry
	e.Priming, e.Dispatched, e.Data = b.Priming(), b.Dispatched, b.Data
	e.SinceStream, e.SinceRun = sinceStream, sinceRun
}

// Chunks reports whether the Queue takes chunks now (Stream.Chunks): while
// fewer than chunkBelow events wait in the batch being filled. A paced
// stream's events, a few between two kicks, leave the Queue's goroutine
// idle most of the time; ten thousand busy streams do not, and parse their
// own reads.
func (q *Queue) Chunks() bool { return !q.crowded.Load() }

// ObserveChunk queues the chunk o (Stream.ObserveChunk), or passes its events on at
// once, after what was queued before, when the batch has no room.
func (q *Queue) ObserveChunk(o *Observation) {
	if q.queue(o, fChunk) {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.drainLocked() {
		q.passRun(q.unpackChunk(o, 0))
		clear(q.runs[:])
		clear(q.evs[:])
	}
}

// chunkArena is how many bytes of chunk events a run holds: a run of
// runLen events of the largest chunk the proxy sends fits.
const chunkArena = runLen * 2 << 10

// unpackChunk parses the blocks of chunk o into the run being built,
// q.runs[:n], each the event the stream would have reported, delivered as
// it came, passes the run on whenever it is full, and returns its length;
// mu is held. A block's bytes are copied into the arena, which the run
// keeps until it is passed on, so that the events of many chunks (a
// thousand paced streams) go on in runs, as queued events do; a block
// larger than the arena goes on alone, from the parser's buffer.
func (q *Queue) unpackChunk(o *Observation, n int) int {
	c := o.Event
	q.chunkSrc.Reset(c.Raw)
	p := &q.parser
	p.ResetChunk(&q.chunkSrc)
	defer p.Reset(nil)
	a := &q.arena
	for i := c.Index; ; i++ {
		b, err := p.Next()
		if err != nil {
			return n
		}
		need := len(b.Raw) + len(b.Data) // Data is a copy when its lines were joined
		if !a.room(0, need, 0) {
			n = q.passRun(n)
		}
		e := &q.evs[n]
		e.SetBlock(i, b, c.SinceStream, c.SinceRun)
		alone := !a.room(0, need, 0)
		if !alone {
			raw := a.keep(e.Raw)
			e.Type, e.ID, e.Data = a.bytes(a.part(e.Raw, raw, e.Type)), a.bytes(a.part(e.Raw, raw, e.ID)), a.bytes(a.part(e.Raw, raw, e.Data))
			e.Raw = a.bytes(raw)
		}
		e.Fate, e.Copies, e.DeliveredAt = c.Fate, c.Copies, c.DeliveredAt
		e.DeliveredID, e.DeliveredHasID = e.ID, e.HasID
		e.DeliveredRetry, e.DeliveredHasRetry = e.Retry, e.HasRetry
		e.Unclassified = e.Dispatched
		e.Classify()
		q.runs[n] = *o
		q.runs[n].Event = e
		if n++; n == runLen || alone {
			n = q.passRun(n)
		}
	}
}

// passRun passes the run q.runs[:n] on, and empties the arena its chunk
// events share; it returns 0, the length of the next run. mu is held.
func (q *Queue) passRun(n int) int {
	if n > 0 {
		ObserveRun(q.next, q.runs[:n])
	}
	q.arena.buf = q.arena.buf[:0]
	return 0
}
