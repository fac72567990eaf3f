package observe

import (
	"bytes"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/sse"
)

// Queue passes observations on to an observer with the events taken off
// the exchanges' path: an event is copied into a batch, and a goroutine of
// the Queue's own hands the batch to the observer while the exchange goes
// on reading and writing. On a busy stream the exchange's goroutine then
// does the proxying and the Queue's the checking, side by side.
//
// Its packed slots, padding, Stages and chunks are hand-made for one
// budget: in the Go SDK flood, fray's CPU per event at most Toxiproxy's
// (docs/performance.md).
//
// The order is kept: every observation but an event (a request, a
// response head, an end, a profile change) is passed on in the caller's
// goroutine, after every event queued before it, and one observation at a
// time. So the observer sees one sequence, the one the exchanges reported
// in, and the observers of a Tee behind the Queue all see the same one
// (the verifier, and the trace that is judged again offline); only its
// timing changes, and what reads the observer's state (a report, the
// metrics) calls Drain first.
//
// An exchange calls Kick after its flush, before it waits (for its
// upstream, a delay, a stall): the events it queued go to the observer
// within kickDelay, not when the next one comes. A batch goes at once when
// it holds kickAt events. The delay lets the events of streams that send
// one at a time reach the observer several at once, where each would
// otherwise wake the goroutine on its own and be observed alone, out of
// the nearer caches: work done on a core the client or the upstream is
// waiting for. Kick arms the timer itself rather than wake the goroutine
// to arm it, so the goroutine wakes once per delay, not twice. What reads
// the observer's state calls Drain first, so it never sees the delay.
// When the batch is full, the caller waits for the Queue's goroutine to
// take it, when that goroutine was woken to, and otherwise (or for an
// event too large for a batch) passes the batch on itself: that bounds the
// memory the Queue holds (two batches of queueEvents events and queueBytes
// bytes) and slows the fastest exchange to the observer's pace. Waiting
// rather than passing the batch on keeps the observer's work off the
// exchange's goroutine: the exchange fills one batch while the goroutine
// passes the other on, where an exchange that passed a full batch on
// itself, after the goroutine's, left the goroutine idle meanwhile.
//
// An exchange that reports a burst of events (the events of one read)
// takes a Stage (stage.go) and commits them at once: one lock for the
// burst rather than one per event.
//
// Queued events are passed on in runs of up to runLen: to an observer that
// takes runs (RunObserver; a Tee passes each run to each of its observers
// in turn) at once, so that an observer with a lock takes it once per run,
// and to any other one at a time. The sequence each observer sees is the
// same either way.
//
// An event the exchange left Unclassified (Stream.Classifies) is
// classified as it is passed on, so that its JSON-RPC scan too runs off
// the exchange's path; and a read's whole blocks that the exchange
// queued unparsed (Stream.ObserveChunk, chunk.go) are parsed then, each
// passed on as the event the exchange would have reported.
//
// A Queue is safe for concurrent use. Its goroutine starts when events
// first fall due and ends with Close. The zero value is not usable; call NewQueue.
type Queue struct {
	next Observer

	// mu is held while observations are passed to next, in queue order,
	// queued events a run at a time (ObserveRun). It guards runs and evs,
	// where they are unpacked to be passed on.
	mu   sync.Mutex
	runs [runLen]Observation
	evs  [runLen]Event
	// parser parses chunks (ObserveChunk) as they are passed on, from
	// chunkSrc, into arena (chunk.go); chunkObs and chunkEv are where a
	// queued one is unpacked.
	parser   sse.Reader
	chunkSrc bytes.Reader
	arena    batch
	chunkObs Observation
	chunkEv  Event

	// The goroutine that passes events on writes runs and evs for every
	// event, and the exchanges write qmu and what it guards for every
	// event: apart, on cache lines of their own, neither takes the
	// other's lines from its core at each event.
	_ linePad

	qmu    sync.Mutex // guards what follows
	fill   *batch     // where events are queued
	spare  *batch     // empty, swapped in when fill is taken
	kicked bool       // fill's events are due; the goroutine was woken
	soon   bool       // fill's events are due within kickDelay; the timer was armed
	// behind is whether fill holds classifyBelow events or more, for
	// Classifies to read without qmu. It is written only when that
	// changes, not at every event, so that reading it costs the
	// exchanges nothing.
	behind atomic.Bool
	// crowded is whether fill holds chunkBelow events or more, for
	// Chunks, written as behind is.
	crowded atomic.Bool
	closed  bool
	started bool // start has run, or is not to run
	running bool // start started the goroutine
	// swapped is signalled, on qmu, when the batch being filled is
	// swapped for the empty one, or the Queue closes: callers waiting for
	// room go on.
	swapped sync.Cond

	_ linePad

	stages stages // lent to the exchanges a read at a time (stage.go)

	_ linePad

	wake chan struct{}
	// fire is the channel of a timer made by newTimer, set when the
	// goroutine starts; a Kick arms it with arm, on the caller's
	// goroutine, for kickDelay. Arming wakes no goroutine: the Queue's
	// wakes once, when the timer fires.
	fire     <-chan time.Time
	arm      func(time.Duration)
	newTimer func() (c <-chan time.Time, reset func(time.Duration))
	stop     chan struct{}
	done     chan struct{}
	once     sync.Once
}

// The Queue's bounds: a batch holds at most queueEvents events, queueBytes
// bytes of theirs and queueFired firings. A batch goes to the observer once
// it holds kickAt events, so that the goroutine works while the exchange
// goes on filling the next one. Each wake of the goroutine costs the
// process a thread's wake-up, so kickAt and kickDelay are as large as the
// flood budget needs (docs/performance.md): a quarter of a batch, and a
// delay no report or scrape sees, since they drain first.
const (
	queueEvents = 1024
	queueBytes  = 256 << 10
	queueFired  = 1024
	kickAt      = 256
	// classifyBelow: with this many events waiting in the batch being
	// filled, the goroutine is behind, and exchanges classify their events
	// themselves (Classifies).
	classifyBelow = 256
	// chunkBelow: with this many events waiting in the batch being
	// filled, the goroutine has work enough, and exchanges parse their
	// reads themselves rather than send them as chunks (Chunks).
	chunkBelow = 64
	// kickDelay: a Kick's events are passed on within this.
	kickDelay = 20 * time.Millisecond
	// runLen is how many queued events are passed on at once, at most.
	runLen = 32
)

// batch is queued events: each one packed in a slot, their bytes in buf
// and their firings in fired. Nothing grows past its capacity, so nothing
// queued moves.
type batch struct {
	slots []slot
	buf   []byte
	fired []faults.Firing
	// An exchange writes the headers above of the batch being filled for
	// every event, the Queue's goroutine reads those of the other for
	// every event: the pad keeps two batches off each other's lines.
	_ linePad
}

// linePad keeps what is written on one core off the cache lines another
// core reads: two lines, for processors that fetch lines in pairs.
type linePad [128]byte

// slot is one queued event: its Observation and Event packed, their byte
// slices as spans of the batch's buf and their firings as a span of its
// fired. Packed, an event takes three cache lines where the two structs
// take seven, and a stream that waits between events finds those lines
// out of its caches each time (BenchmarkQueueEventCold). pack and unpack
// carry every field across (TestQueueCarriesEveryField).
type slot struct {
	at, sinceStream, sinceRun, deliveredAt time.Duration
	exchange                               uint64
	sessionSeq, index, copies              int
	retry, deliveredRetry                  int64
	session, protocol                      string

	raw, typ, id, data, method, rpcID, delivered, deliveredID, fired span

	stream  mcp.StreamType
	rpcKind mcp.RPCKind
	fate    Fate
	flags   slotFlags
}

// span is where a slice sits in a batch: its offset, and its length plus
// one, so that the zero span is a nil slice and an empty one stays empty.
type span struct{ off, n uint32 }

// slotFlags are an event's booleans, a bit each.
type slotFlags uint16

const (
	fParsed slotFlags = 1 << iota
	fHasID
	fHasRetry
	fPriming
	fDispatched
	fDeliveredHasID
	fDeliveredHasRetry
	fCorrupted
	fUnclassified
	fScanned
	// fChunk: the slot holds a chunk's blocks (ObserveChunk), its event
	// what they share.
	fChunk
)

func flagIf(b bool, f slotFlags) slotFlags {
	if b {
		return f
	}
	return 0
}

func newBatch() *batch {
	return &batch{
		slots: make([]slot, 0, queueEvents),
		buf:   make([]byte, 0, queueBytes),
		fired: make([]faults.Firing, 0, queueFired),
	}
}

// pack copies event o into sl, its bytes and firings into the batch.
func (b *batch) pack(sl *slot, o *Observation) {
	e := o.Event
	sl.at, sl.sinceStream, sl.sinceRun, sl.deliveredAt = o.At, e.SinceStream, e.SinceRun, e.DeliveredAt
	sl.exchange, sl.sessionSeq, sl.index, sl.copies = o.Exchange, o.SessionSeq, e.Index, e.Copies
	sl.retry, sl.deliveredRetry = e.Retry, e.DeliveredRetry
	sl.session, sl.protocol = o.Session, o.Protocol
	sl.stream, sl.rpcKind, sl.fate = o.Stream, e.RPCKind, e.Fate
	sl.flags = flagIf(e.Parsed, fParsed) | flagIf(e.HasID, fHasID) | flagIf(e.HasRetry, fHasRetry) |
		flagIf(e.Priming, fPriming) | flagIf(e.Dispatched, fDispatched) |
		flagIf(e.DeliveredHasID, fDeliveredHasID) | flagIf(e.DeliveredHasRetry, fDeliveredHasRetry) |
		flagIf(e.Corrupted, fCorrupted) | flagIf(e.Unclassified, fUnclassified) | flagIf(e.Scanned, fScanned)
	// The fields of a block are parts of its raw bytes, and the JSON-RPC
	// identity parts of its data, as a rule: they are copied with them.
	sl.raw = b.keep(e.Raw)
	sl.typ = b.part(e.Raw, sl.raw, e.Type)
	sl.id = b.part(e.Raw, sl.raw, e.ID)
	sl.data = b.part(e.Raw, sl.raw, e.Data)
	sl.method = b.part(e.Data, sl.data, e.RPCMethod)
	sl.rpcID = b.part(e.Data, sl.data, e.RPCID)
	sl.delivered = b.keep(e.Delivered)
	if e.Delivered != nil {
		sl.deliveredID = b.part(e.Delivered, sl.delivered, e.DeliveredID)
	} else {
		// Delivered as it came: the id the client got is the block's.
		sl.deliveredID = b.part(e.Raw, sl.raw, e.DeliveredID)
	}
	sl.fired = span{}
	if o.Fired != nil {
		sl.fired = span{uint32(len(b.fired)), uint32(len(o.Fired)) + 1}
		b.fired = append(b.fired, o.Fired...)
	}
}

// unpack sets o and e, every field, to the event sl holds; o.Event is e.
// The slices point into the batch. (Field by field: a composite literal
// would be built aside and copied over, twice the stores.)
func (b *batch) unpack(sl *slot, o *Observation, e *Event) {
	f := sl.flags
	e.Index, e.Raw, e.Parsed = sl.index, b.bytes(sl.raw), f&fParsed != 0
	e.Type, e.ID, e.HasID = b.bytes(sl.typ), b.bytes(sl.id), f&fHasID != 0
	e.Retry, e.HasRetry = sl.retry, f&fHasRetry != 0
	e.Priming, e.Dispatched = f&fPriming != 0, f&fDispatched != 0
	e.Data, e.RPCKind, e.RPCMethod, e.RPCID = b.bytes(sl.data), sl.rpcKind, b.bytes(sl.method), b.bytes(sl.rpcID)
	e.SinceStream, e.SinceRun = sl.sinceStream, sl.sinceRun
	e.Fate, e.DeliveredAt = sl.fate, sl.deliveredAt
	e.Delivered, e.DeliveredID, e.DeliveredHasID = b.bytes(sl.delivered), b.bytes(sl.deliveredID), f&fDeliveredHasID != 0
	e.DeliveredRetry, e.DeliveredHasRetry = sl.deliveredRetry, f&fDeliveredHasRetry != 0
	e.Copies, e.Corrupted, e.Unclassified, e.Scanned = sl.copies, f&fCorrupted != 0, f&fUnclassified != 0, f&fScanned != 0

	o.Kind, o.At, o.Exchange, o.Stream = KindEvent, sl.at, sl.exchange, sl.stream
	o.Session, o.SessionSeq, o.Protocol = sl.session, sl.sessionSeq, sl.protocol
	o.Fired = nil
	if s := sl.fired; s.n != 0 {
		end := s.off + s.n - 1
		o.Fired = b.fired[s.off:end:end]
	}
	o.Request, o.Response, o.Event, o.End, o.Profile = nil, nil, e, nil, nil
}

// bytes returns the slice s spans.
func (b *batch) bytes(s span) []byte {
	if s.n == 0 {
		return nil
	}
	end := s.off + s.n - 1
	return b.buf[s.off:end:end]
}

// NewQueue returns a Queue that passes observations on to next.
func NewQueue(next Observer) *Queue {
	q := &Queue{
		next: next, fill: newBatch(), spare: newBatch(), arena: batch{buf: make([]byte, 0, chunkArena)},
		wake: make(chan struct{}, 1), newTimer: newTimer, stop: make(chan struct{}), done: make(chan struct{}),
	}
	q.swapped.L = &q.qmu
	return q
}

// Observe queues an event, and passes anything else on once what was
// queued before it was.
func (q *Queue) Observe(o *Observation) {
	if o.Kind == KindEvent && o.Event != nil {
		if q.queue(o, 0) {
			return
		}
		o.Event.Classify()
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.drainLocked() {
		q.next.Observe(o)
	}
}

// queue copies event o into the batch being filled, its slot marked with
// mark (fChunk, or none). It reports false when it could not: the Queue is
// closed, the batch has no room, or o carries more than an event (a
// request, a response, an end or a profile change), which a slot does not
// hold; the caller then passes o on itself.
func (q *Queue) queue(o *Observation, mark slotFlags) bool {
	if !eventOnly(o) {
		return false
	}
	size := eventSize(o.Event)
	q.qmu.Lock()
	if !q.roomFor(1, size, len(o.Fired)) {
		q.qmu.Unlock()
		return false
	}
	b := q.fill
	b.slots = b.slots[:len(b.slots)+1]
	switch len(b.slots) {
	case chunkBelow:
		q.crowded.Store(true)
	case classifyBelow:
		q.behind.Store(true)
	}
	sl := &b.slots[len(b.slots)-1]
	b.pack(sl, o)
	sl.flags |= mark
	due := len(b.slots) >= kickAt && q.due()
	q.qmu.Unlock()
	if due {
		signal(q.wake)
	}
	return true
}

// room reports whether b has room for events more events, size more
// bytes and fired more firings.
func (b *batch) room(events, size, fired int) bool {
	return events <= cap(b.slots)-len(b.slots) && size <= cap(b.buf)-len(b.buf) && fired <= cap(b.fired)-len(b.fired)
}

// roomFor reports whether the batch being filled has room for events more
// events, size more bytes and fired more firings, and the Queue is open;
// qmu is held. When the batch has no room and the Queue's goroutine was
// woken to take it, it waits for the goroutine to swap it for the empty
// one. It does not wait when no goroutine is on its way (none runs, or the
// batch is not due): the caller then passes the batch on itself.
func (q *Queue) roomFor(events, size, fired int) bool {
	for !q.closed {
		if q.fill.room(events, size, fired) {
			return true
		}
		if !q.kicked || !q.running {
			return false
		}
		q.swapped.Wait()
	}
	return false
}

// eventOnly reports whether event observation o carries nothing but the
// event, all that a slot holds.
func eventOnly(o *Observation) bool {
	return o.Request == nil && o.Response == nil && o.End == nil && o.Profile == nil
}

// eventSize is how many bytes of a batch queueing e takes at most.
func eventSize(e *Event) int {
	return len(e.Raw) + len(e.Type) + len(e.ID) + len(e.Data) + len(e.RPCMethod) + len(e.RPCID) +
		len(e.Delivered) + len(e.DeliveredID)
}

// keep copies s into the batch's bytes; nil stays nil.
func (b *batch) keep(s []byte) span {
	if s == nil {
		return span{}
	}
	n := len(b.buf)
	b.buf = append(b.buf, s...)
	return span{uint32(n), uint32(len(s)) + 1}
}

// part returns s as the same part of kept, the copy of whole, when s is a
// part of whole; otherwise a copy of s.
func (b *batch) part(whole []byte, kept span, s []byte) span {
	if len(s) == 0 || len(s) > len(whole) {
		return b.keep(s)
	}
	// Only the addresses are compared; nothing is read or written
	// through them.
	off := uintptr(unsafe.Pointer(unsafe.SliceData(s))) - uintptr(unsafe.Pointer(unsafe.SliceData(whole)))
	if off > uintptr(len(whole)-len(s)) {
		return b.keep(s)
	}
	return span{kept.off + uint32(off), uint32(len(s)) + 1}
}

func (b *batch) reset() {
	clear(b.slots)
	clear(b.fired)
	b.slots, b.buf, b.fired = b.slots[:0], b.buf[:0], b.fired[:0]
}

// due marks the queued events due now, once, and starts the goroutine if
// it has not started; it reports whether the goroutine is to be woken. qmu
// is held.
func (q *Queue) due() bool {
	if q.kicked || q.closed || len(q.fill.slots) == 0 {
		return false
	}
	q.kicked = true
	q.start()
	return true
}

// dueSoon marks the queued events due within the delay, once, and starts
// the goroutine if it has not started; it reports whether the timer is to
// be armed. qmu is held.
func (q *Queue) dueSoon() bool {
	if q.kicked || q.soon || q.closed || len(q.fill.slots) == 0 {
		return false
	}
	q.soon = true
	q.start()
	return true
}

// start starts the goroutine, once; qmu is held.
func (q *Queue) start() {
	if !q.started {
		q.started, q.running = true, true
		q.fire, q.arm = q.newTimer()
		go q.run()
	}
}

// signal sends on c, a channel of one, unless a signal waits there.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// Classifies reports whether the Queue takes the classification of events
// off the exchanges' path now: while its goroutine keeps up, so that
// fewer than classifyBelow events wait in the batch being filled. It
// classifies an Unclassified event as it passes it on, in its goroutine
// (or in the caller's, when it passes the event on directly).
func (q *Queue) Classifies() bool { return !q.behind.Load() }

// Kick has the events queued so far passed on by the Queue's goroutine
// within kickDelay, without waiting for more: the caller is about to wait.
func (q *Queue) Kick() {
	q.qmu.Lock()
	soon := q.dueSoon()
	q.qmu.Unlock()
	if soon {
		q.arm(kickDelay)
	}
}

// Drain passes on every event queued so far, in the caller's goroutine,
// before it returns. What reads the observer's state calls it first.
func (q *Queue) Drain() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.drainLocked()
}

// drainLocked passes the batch being filled on, and reports whether the
// Queue is closed; mu is held. The batch is swapped for the empty spare
// first, so that exchanges queue into that one meanwhile.
func (q *Queue) drainLocked() (closed bool) {
	q.qmu.Lock()
	b := q.fill
	q.fill, q.spare = q.spare, b
	if q.behind.Load() != (len(q.fill.slots) >= classifyBelow) {
		q.behind.Store(len(q.fill.slots) >= classifyBelow)
	}
	if q.crowded.Load() != (len(q.fill.slots) >= chunkBelow) {
		q.crowded.Store(len(q.fill.slots) >= chunkBelow)
	}
	q.kicked, q.soon = false, false
	closed = q.closed
	q.swapped.Broadcast()
	q.qmu.Unlock()
	n, used := 0, 0 // events in the run being built; the most it held
	for i := range b.slots {
		sl := &b.slots[i]
		if sl.flags&fChunk != 0 {
			b.unpack(sl, &q.chunkObs, &q.chunkEv)
			n = q.unpackChunk(&q.chunkObs, n)
			used = runLen
			continue
		}
		b.unpack(sl, &q.runs[n], &q.evs[n])
		q.evs[n].Classify()
		used = max(used, n+1)
		if n++; n == runLen {
			n = q.passRun(n)
		}
	}
	q.passRun(n)
	clear(q.runs[:used])
	clear(q.evs[:used])
	q.chunkObs, q.chunkEv = Observation{}, Event{}
	b.reset()
	return closed
}

// run passes the events on as they fall due: at once when woken, within
// kickDelay when kicked.
func (q *Queue) run() {
	defer close(q.done)
	defer q.arm(-1)
	for {
		select {
		case <-q.stop:
			return
		case <-q.wake:
			q.Drain()
		case <-q.fire:
			q.Drain()
		}
	}
}

// newTimer returns a stopped timer's channel, and a function that arms it
// to fire in d, or stops it for d < 0.
func newTimer() (<-chan time.Time, func(time.Duration)) {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t.C, func(d time.Duration) {
		if d < 0 {
			t.Stop()
			return
		}
		t.Reset(d)
	}
}

// Close passes on what is queued, then stops: later observations are
// dropped, and the Queue's goroutine has ended when Close returns. Close
// may be called more than once.
func (q *Queue) Close() {
	q.mu.Lock()
	q.qmu.Lock()
	q.closed = true
	started := q.started
	q.qmu.Unlock()
	q.drainLocked()
	q.mu.Unlock()
	q.once.Do(func() { close(q.stop) })
	if started {
		<-q.done
	}
}
