package observe

import (
	"time"

	"github.com/frayproxy/fray/proxy/sse"
)

// Chunker is an Observer that takes the whole blocks of one read from the
// upstream unparsed (a Queue): the stream copies them to it, before it
// writes them to its client, and the Chunker parses them as they are
// passed on, off the stream's path. So a stream whose events fray does
// not change costs, between its read and its write, the copy, not the
// parse and the view of each event. The observers see exactly the events
// the stream would have reported, in the same place in the sequence.
//
// ObserveChunk takes an event observation whose Event is what its blocks
// share: Raw the blocks (sse.Reader.ReadChunk: whole blocks of LF-ended
// lines, at a block's edge past the stream's start), Index the first
// one's, the times of their read (SinceStream, SinceRun, DeliveredAt),
// and their fate, Delivered as they came, Copies 1; nothing else is set.
// Classifies says whether the Chunker keeps up, so that the stream parses
// itself while it does not.
type Chunker interface {
	ObserveChunk(o *Observation)
	Classifier
}

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

// ObserveChunk queues the chunk o (Chunker), or passes its events on at
// once, after what was queued before, when the batch has no room.
func (q *Queue) ObserveChunk(o *Observation) {
	if q.queue(o, fChunk) {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.drainLocked() {
		q.passChunk(o)
	}
}

// passChunk parses the blocks of chunk o and passes each on as the event
// the stream would have reported, delivered as it came; mu is held. Each
// goes on its own: its slices point into the parser's buffer, which the
// next block reuses.
func (q *Queue) passChunk(o *Observation) {
	c := o.Event
	p := &q.parser
	p.ResetChunk(c.Raw)
	defer p.Reset(nil)
	run := q.runs[:1]
	ob, e := &run[0], &q.evs[0]
	for i := c.Index; ; i++ {
		b, err := p.Next()
		if err != nil {
			break
		}
		e.SetBlock(i, b, c.SinceStream, c.SinceRun)
		e.Fate, e.Copies, e.DeliveredAt = c.Fate, c.Copies, c.DeliveredAt
		e.DeliveredID, e.DeliveredHasID = b.ID, b.HasID
		e.DeliveredRetry, e.DeliveredHasRetry = b.Retry, b.HasRetry
		e.Unclassified = b.Dispatched
		e.Classify()
		*ob = *o
		ob.Event = e
		ObserveRun(q.next, run)
	}
	*ob, *e = Observation{}, Event{}
}
