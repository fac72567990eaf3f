package forward

import (
	"io"
	"sync"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/jsonrpc"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/sse"
)

// source is a stream's upstream side, the first stage of its pipeline: the
// upstream's body, the SSE reader over it, and when each read returned.
// Before the reader waits for more bytes it runs beforeRead (the pump
// flushes its sink there), so that no event waits for the network and a
// burst of events that came in one read leaves in one write. After each
// read it takes the time once: every event that read completes arrived
// then.
type source struct {
	rd    *sse.Reader
	clock Clock
	start time.Time // when the proxy started
	// beforeRead runs before each read from the upstream.
	beforeRead func() error
	// timed: someone needs each read's time (observers or faults).
	timed bool
	// readAt is when the last read returned; readRun and startRun are
	// readAt and the stream's start since the proxy started, taken once
	// per read and once per stream, so that an event finds them ready.
	readAt            time.Time
	readRun, startRun time.Duration
	// index is the stream's next block's place in it.
	index int
	// idle ends the stream after a silence, when an idle-close fault
	// armed it.
	idle *idleTimer
}

// open starts reading body with rd, a reader of the proxy's pool.
func (s *source) open(rd *sse.Reader, body io.Reader) {
	s.rd = rd
	if w, ok := body.(sse.Waiter); ok {
		rd.Reset(&waitingBody{sourceBody{body, s}, w})
		return
	}
	rd.Reset(&sourceBody{body, s})
}

// sourceBody is the upstream body as the SSE reader sees it.
type sourceBody struct {
	body io.Reader
	s    *source
}

func (b *sourceBody) Read(p []byte) (int, error) {
	s := b.s
	if err := s.beforeRead(); err != nil {
		return 0, err
	}
	n, err := b.body.Read(p)
	if s.timed {
		s.readAt = s.clock.Now()
		s.readRun = s.readAt.Sub(s.start)
	}
	if s.idle != nil && n > 0 {
		s.idle.touch(s.readAt)
	}
	return n, err
}

// waitingBody is a sourceBody that can wait for its next bytes without a
// buffer (sse.Waiter, a stream on a connection of its own): before it
// waits, it runs beforeRead, as a read does.
type waitingBody struct {
	sourceBody
	w sse.Waiter
}

func (b *waitingBody) WaitRead() error {
	if err := b.s.beforeRead(); err != nil {
		return err
	}
	return b.w.WaitRead()
}

// next returns the stream's next block.
func (s *source) next() (*sse.Event, error) { return s.rd.Next() }

// describe sets v to the view of block e, the one description of it that
// the decision and the observers read: its fields, its place and read
// times, and msg, the JSON-RPC identity of its data (scanned: what
// jsonrpc.Scan found there).
func (s *source) describe(v *observe.Event, e *sse.Event, msg *jsonrpc.Message, scanned bool) {
	v.SetBlock(s.index, e, s.readRun-s.startRun, s.readRun)
	v.RPCKind, v.RPCMethod, v.RPCID, v.Scanned = msg.Kind, msg.Method, msg.ID, scanned
	s.index++
}

// describeRaw sets v to the view of bytes fray passes on unparsed.
func (s *source) describeRaw(v *observe.Event, e *sse.Event) {
	*v = observe.Event{Event: mcp.Event{Index: s.index, Raw: e.Raw}}
	s.index++
}

// describeChunk sets v to what the blocks of chunk c share (see
// observe.Stream.ObserveChunk), blocks of them.
func (s *source) describeChunk(v *observe.Event, c []byte, blocks int) {
	*v = observe.Event{}
	v.Index, v.Raw = s.index, c
	v.SinceStream, v.SinceRun = s.readRun-s.startRun, s.readRun
	v.Fate, v.Copies, v.DeliveredAt = observe.Delivered, 1, s.readRun
	s.index += blocks
}

// idleTimer ends a stream once silence has passed since its last read (the
// idle-close fault, which imitates an intermediary's idle timeout). Reads
// only note their time; the timer, when it fires, asks faults.IdleExpired
// whether the silence is whole and otherwise waits the rest, so that a busy
// stream costs no timer per read. It is safe for concurrent use: the
// source touches it, the clock's goroutine fires it.
type idleTimer struct {
	mu      sync.Mutex
	clock   Clock
	silence time.Duration
	last    time.Time
	stop    func() bool
	done    bool
	fire    func()
}

// newIdleTimer starts an idle timer; fire ends the stream.
func newIdleTimer(clock Clock, silence time.Duration, fire func()) *idleTimer {
	t := &idleTimer{clock: clock, silence: silence, last: clock.Now(), fire: fire}
	t.mu.Lock()
	t.stop = t.clock.AfterFunc(silence, t.check)
	t.mu.Unlock()
	return t
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
