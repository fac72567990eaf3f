package observe

import (
	"sync"

	"github.com/frayproxy/fray/faults"
)

// Stage gathers the events of one exchange on that exchange's goroutine,
// with no lock, in memory that only that goroutine writes, and hands them
// to its Queue at once when committed: a read from the upstream that
// brings a burst of events takes the Queue's lock once, not once per
// event, and the burst is copied into the Queue's batch, which the Queue's
// goroutine reads on the other core, in one go.
//
// A Stage keeps the order of what it is given: an observation other than
// an event (a response head, an end) is passed on after the events staged
// before it. Events staged and not yet committed are not yet queued: a
// Drain does not see them, so the exchange commits before its client can
// have the events and before it waits.
//
// A Stage is used by one goroutine at a time. Its zero value is not
// usable; Queue.stage lends one.
type Stage struct {
	q *Queue
	b *batch
}

// stages are the Stages a Queue lends: at most maxStages made, those given
// back kept for the next exchange, the last given back lent first (still
// in its core's caches, on a busy stream). A stream holds one only while
// it handles events between two writes to its client, but it may wait
// then, for the Queue's batch (Commit): the bound keeps a burst of
// thousands of streams from holding a Stage each, and kept, a Stage is
// made once, not again after each garbage collection. The zero value
// lends none yet.
type stages struct {
	mu   sync.Mutex
	free []*Stage
	made int
}

// maxStages bounds the Stages a Queue lends at once, about 60 KiB each.
const maxStages = 8

// A Stage holds at most stageEvents events, stageBytes bytes of theirs and
// stageFired firings, less than an empty batch of the Queue holds, so that
// one commit always fits there; a burst larger than that is committed in
// parts as it comes.
const (
	stageEvents = 128
	stageBytes  = 32 << 10
	stageFired  = 128
)

// stage lends a Stage that commits to q, or nil when maxStages are lent
// already. The caller gives it back with giveBack.
func (q *Queue) stage() *Stage {
	l := &q.stages
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.free); n > 0 {
		s := l.free[n-1]
		l.free = l.free[:n-1]
		return s
	}
	if l.made == maxStages {
		return nil
	}
	l.made++
	return &Stage{q: q, b: &batch{
		slots: make([]slot, 0, stageEvents),
		buf:   make([]byte, 0, stageBytes),
		fired: make([]faults.Firing, 0, stageFired),
	}}
}

// Observe stages event o, and passes anything else on to the Queue once
// the events staged before it are committed.
func (s *Stage) Observe(o *Observation) {
	if o.Kind == KindEvent && o.Event != nil && s.stage(o) {
		return
	}
	s.Commit()
	s.q.Observe(o)
}

// stage packs event o into the Stage, committing first when it has no
// room. It reports false when o cannot be staged: it carries more than an
// event, or it is larger than an empty Stage holds.
func (s *Stage) stage(o *Observation) bool {
	if !eventOnly(o) {
		return false
	}
	size, nfired := eventSize(o.Event), len(o.Fired)
	if size > stageBytes || nfired > stageFired {
		return false
	}
	b := s.b
	if !b.room(1, size, nfired) {
		s.Commit()
	}
	b.slots = b.slots[:len(b.slots)+1]
	b.pack(&b.slots[len(b.slots)-1], o)
	return true
}

// Commit hands the staged events to the Queue, after what it holds. When
// the Queue's batch has no room for them, Commit waits for the Queue's
// goroutine to take that batch, or passes it on first, in the caller's
// goroutine, as Observe does; when the Queue is closed, the events are
// dropped, as later observations are.
func (s *Stage) Commit() {
	if len(s.b.slots) == 0 {
		return
	}
	q := s.q
	for !q.commit(s.b) {
		q.Drain()
	}
	s.b.reset()
}

// giveBack commits what is staged and gives the Stage back to its Queue;
// s is not to be used after.
func (s *Stage) giveBack() {
	s.Commit()
	l := &s.q.stages
	l.mu.Lock()
	l.free = append(l.free, s)
	l.mu.Unlock()
}

// commit appends the events of staged to the batch being filled, and
// reports false when that batch has no room for them all, and the Queue's
// goroutine is not on its way to take it (roomFor). A closed Queue takes
// them, to drop them.
func (q *Queue) commit(staged *batch) bool {
	q.qmu.Lock()
	if q.closed {
		q.qmu.Unlock()
		return true
	}
	if !q.roomFor(len(staged.slots), len(staged.buf), len(staged.fired)) {
		q.qmu.Unlock()
		return false
	}
	f := q.fill
	n := len(f.slots)
	f.append(staged)
	if n < chunkBelow && len(f.slots) >= chunkBelow {
		q.crowded.Store(true)
	}
	if n < classifyBelow && len(f.slots) >= classifyBelow {
		q.behind.Store(true)
	}
	due := len(f.slots) >= kickAt && q.due()
	q.qmu.Unlock()
	if due {
		signal(q.wake)
	}
	return true
}

// append copies the events of staged after b's, their spans moved to
// where their bytes and firings land in b; b has room for them.
func (b *batch) append(staged *batch) {
	at, firedAt := uint32(len(b.buf)), uint32(len(b.fired))
	n := len(b.slots)
	b.buf = append(b.buf, staged.buf...)
	b.fired = append(b.fired, staged.fired...)
	b.slots = b.slots[:n+len(staged.slots)]
	for i := range staged.slots {
		d := &b.slots[n+i]
		*d = staged.slots[i]
		d.raw.move(at)
		d.typ.move(at)
		d.id.move(at)
		d.data.move(at)
		d.method.move(at)
		d.rpcID.move(at)
		d.delivered.move(at)
		d.deliveredID.move(at)
		d.fired.move(firedAt)
	}
}

// move shifts a span's offset by d; the nil span stays nil.
func (s *span) move(d uint32) {
	if s.n != 0 {
		s.off += d
	}
}

// queueStream is a Queue's handle on one stream (Stream). The first event
// since the stream last flushed goes to the Queue directly: an event that
// comes alone, as on a paced stream, costs one hand-over rather than a
// Stage lent, filled, committed and given back. The events of a burst
// that follow it take a Stage, which the stream holds only until it
// flushes: it may block then, writing to its client or waiting.
type queueStream struct {
	q     *Queue
	stage *Stage
	// burst: an event was reported since the last Flush.
	burst bool
	// reported: events were reported since the last Flush, which then
	// kicks the Queue.
	reported bool
}

// Stream returns a handle on a new stream whose events q takes a burst
// at a time.
func (q *Queue) Stream() Stream { return &queueStream{q: q} }

func (s *queueStream) Observe(o *Observation) {
	if o.Kind == KindEvent {
		s.reported = true
		if !s.burst {
			s.burst = true
			s.q.Observe(o)
			return
		}
		if s.stage == nil {
			s.stage = s.q.stage()
		}
		if s.stage != nil {
			s.stage.Observe(o)
			return
		}
	}
	if s.stage != nil {
		s.stage.Commit()
	}
	s.q.Observe(o)
}

func (s *queueStream) Flush() {
	s.burst = false
	if s.stage != nil {
		s.stage.giveBack()
		s.stage = nil
	}
	if s.reported {
		s.reported = false
		s.q.Kick()
	}
}

func (s *queueStream) Classifies() bool { return s.q.Classifies() }

func (s *queueStream) Chunks() bool { return s.q.Chunks() }

func (s *queueStream) ObserveChunk(o *Observation) {
	s.reported = true
	s.q.ObserveChunk(o)
}
