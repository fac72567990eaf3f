package observe

// Stream is an observer's handle on one event stream: the proxy reports
// everything of the stream through it (its head, each event, its end), from
// the stream's goroutine only, and flushes it before any byte of what it
// reported can reach the client. Take one with NewStream.
type Stream interface {
	// Observe reports the stream's head, one of its events, or its end.
	Observe(o *Observation)
	// Flush hands on everything reported so far. The proxy calls it
	// before it writes to the client and before the stream waits (for
	// its upstream, a delay, a stall): an observer has each event before
	// the client can act on it, and has it soon when nothing follows.
	Flush()
	// Classifies reports whether the handle finds the JSON-RPC identity
	// of an event marked Unclassified itself, off the stream's path, so
	// that the proxy may leave it undone.
	Classifies() bool
	// Chunks reports whether ObserveChunk takes the whole blocks of one
	// read now, unparsed: an event observation whose Event is what the
	// blocks share (Raw the blocks, sse.Reader.ReadChunk; Index the
	// first one's; the times of their read; Delivered, Copies 1). The
	// handle parses them as it passes them on, into exactly the events
	// the stream would have reported. A handle that is busy says false,
	// and the stream parses its reads itself.
	Chunks() bool
	ObserveChunk(o *Observation)
}

// StreamObserver is an Observer that gives each event stream a handle of
// its own (a Queue).
type StreamObserver interface {
	Observer
	Stream() Stream
}

// NewStream returns ob's handle on a new event stream: its own, when ob
// is a StreamObserver, otherwise one that hands each observation to ob as
// it comes and leaves every event's parse on the stream's path.
func NewStream(ob Observer) Stream {
	if s, ok := ob.(StreamObserver); ok {
		return s.Stream()
	}
	return direct{ob}
}

// direct is the Stream of an Observer that offers none.
type direct struct{ ob Observer }

func (d direct) Observe(o *Observation) { d.ob.Observe(o) }
func (direct) Flush()                   {}
func (direct) Classifies() bool         { return false }
func (direct) Chunks() bool             { return false }

// ObserveChunk is never called: Chunks says false.
func (d direct) ObserveChunk(o *Observation) {
	panic("observe: a chunk for an observer that takes none")
}
