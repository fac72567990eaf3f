package forward

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"golang.org/x/time/rate"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/sse"
)

// pump carries one text/event-stream response from the upstream to the
// client, one event block at a time, on the handler's goroutine (no
// goroutine of its own):
//
//	upstream body -> timedRead (the clock, once per read) -> sse.Reader -> event block
//	    -> view (one mcp.Event: what the plan decides on and the observers see)
//	    -> decide (the stream plan) -> carry out (writes) -> outcome -> observation
//
// A stream no fault can hit, whose observer is a Chunker, takes a shorter
// way for a read that brings nothing but whole blocks (chunk.go):
//
//	upstream body -> timedRead -> sse.Reader.ReadChunk -> Chunker (a copy) -> write
//
// and the Chunker parses the blocks later, off the stream's path.
//
// This file holds the I/O; event.go the way from a block to its outcome.
type pump struct {
	p      *Proxy
	w      http.ResponseWriter
	rc     *http.ResponseController
	r      *http.Request
	resp   *http.Response
	ex     *exchange
	cancel context.CancelCauseFunc

	sp      faults.StreamPlan
	lim     *rate.Limiter
	stopTTL func() bool // stops a timed close, when one is armed
	started time.Time
	index   int
	lose    int // events still to swallow before closing
	out     []byte
	scratch []byte
	gather  *[]byte // what was written since the last flush (gather.go)
	warned  bool
	pending bool // written to the client since the last flush

	// The intermediaries' faults (intermediary.go): idle is an idle close,
	// when one is armed; buffered are events held back, not yet written;
	// buffering says the current event is to be held.
	idle      *idleTimer
	buffered  []byte
	buffering bool
	heldObs   []heldObservation

	// planLater: the plan starts at the first event (a GET that may be,
	// or is, a legacy stream).
	planLater bool
	// holding: a fault asked for a hold; the stream's end is reported
	// when it ends, at endAt (see hold.go). rd is the stream's reader.
	holding bool
	endAt   time.Duration
	rd      *sse.Reader
	// abort: the client's stream must be reset by aborting the handler
	// (HTTP/2, where the connection cannot be taken over), once the
	// stream's events and end have been observed.
	abort bool

	// sleeper: wait's, one timer for the stream on the real clock.
	sleeper sleeper

	// timed: the pump needs the time of each read (observers or faults).
	timed  bool
	readAt time.Time // when the last read from the upstream returned
	// readRun and startRun are readAt and started since the proxy
	// started, taken once per read and once per stream, so that an event
	// finds its times ready.
	readRun, startRun time.Duration

	// What observers are told. The current block's view and its
	// observation live in es, which the stream holds only while it has
	// events to handle (scratch.go), so that reporting an event allocates
	// nothing and an idle stream holds neither.
	observed bool // the response head was reported
	reported bool // events were reported since the observer was last kicked
	cause    observe.Cause
	endErr   string
	es       *eventScratch
	// stage gathers the stream's events for a Stager (the engine's queue)
	// between two waits; nil while the stream waits, or with no Stager.
	stage *observe.Stage
	// burst: an event was reported since the stream last wrote or waited;
	// the next one goes by way of the Stage.
	burst bool
	// chunks: the stream's reads that bring whole blocks go to the
	// Chunker unparsed (chunk.go).
	chunks bool
}

// timedRead is the upstream body as the SSE reader sees it. Before the
// reader waits for more bytes, whatever was written to the client is
// flushed, so that no event waits for the network and a burst of events
// that arrived in one read leaves in one flush. After each read it takes
// the time once: every event that read completes arrived then.
type timedRead struct {
	body io.Reader
	pm   *pump
}

func (t *timedRead) Read(b []byte) (int, error) {
	if err := t.pm.flush(); err != nil {
		return 0, &clientWriteError{err}
	}
	t.pm.releaseScratch()
	n, err := t.body.Read(b)
	if t.pm.timed {
		t.pm.readAt = t.pm.p.clock.Now()
		t.pm.readRun = t.pm.readAt.Sub(t.pm.p.start)
	}
	if t.pm.idle != nil && n > 0 {
		t.pm.idle.touch(t.pm.readAt)
	}
	return n, err
}

// timedWaitRead is timedRead of a body that can wait for its next bytes
// without a buffer (sse.Waiter, a stream on a connection of its own):
// before it waits, it flushes, as a read does, and the read that follows
// takes the time.
type timedWaitRead struct {
	timedRead
	w sse.Waiter
}

func (t *timedWaitRead) WaitRead() error {
	if err := t.pm.flush(); err != nil {
		return &clientWriteError{err}
	}
	t.pm.releaseScratch()
	return t.w.WaitRead()
}

// newTimedRead is the source pm's SSE reader reads body from.
func newTimedRead(body io.Reader, pm *pump) io.Reader {
	if w, ok := body.(sse.Waiter); ok {
		return &timedWaitRead{timedRead{body: body, pm: pm}, w}
	}
	return &timedRead{body: body, pm: pm}
}

// flush commits the events observed and gives the Stage back (a write to
// the client, or a wait, may block), sends what was written to the client,
// if anything, then kicks the observer: the stream is about to wait.
func (pm *pump) flush() error {
	pm.releaseStage()
	if pm.pending {
		pm.pending = false
		if err := pm.drain(); err != nil {
			pm.cancel(err)
			return err
		}
		if err := pm.rc.Flush(); err != nil {
			pm.cancel(err)
			return err
		}
	}
	if pm.reported {
		pm.reported = false
		pm.p.kicker.Kick()
	}
	return nil
}

// wait flushes, then sleeps d on the proxy's clock; it reports whether the
// client is still there.
func (pm *pump) wait(d time.Duration) bool {
	if pm.flush() != nil {
		return false
	}
	// One timer serves the whole stream, so that a delay fault firing
	// costs no allocation.
	return pm.sleeper.sleep(pm.r.Context(), pm.p.clock, d)
}

// pump streams resp to w. cancel ends the upstream request.
func (p *Proxy) pump(w http.ResponseWriter, r *http.Request, ex *exchange, resp *http.Response, cancel context.CancelCauseFunc) {
	h := w.Header()
	copyHeader(h, resp.Header)
	// Faults may change the length of the body; an SSE body has none anyway.
	h.Del("Content-Length")
	w.WriteHeader(resp.StatusCode)
	pm := &pump{p: p, w: w, rc: http.NewResponseController(w), r: r, resp: resp, ex: ex, cancel: cancel, cause: observe.ClientGone}
	pm.timed = p.observing() || p.opts.Faults != nil
	pm.started = p.clock.Now()
	pm.startRun = pm.started.Sub(p.start)
	pm.readAt, pm.readRun = pm.started, pm.startRun
	// Deferred first, so that it runs last: the reset of an HTTP/2 stream
	// comes after its events and its end were observed.
	defer pm.abortIfAsked()
	defer pm.endOrHold()
	if err := pm.rc.Flush(); err != nil {
		return
	}
	rd := p.newReader(newTimedRead(resp.Body, pm))
	pm.rd = rd
	defer pm.flushAll()
	defer pm.stopTimers()
	// A plain GET may turn out to be a legacy stream when its first event
	// announces an endpoint, and a legacy stream learns its session from
	// that event: the plan is chosen, and the head reported, once that is
	// known.
	pm.planLater = r.Method == http.MethodGet && (ex.Stream == mcp.StreamGet || ex.Stream == mcp.StreamLegacy)
	if !pm.planLater {
		if !pm.startPlan() {
			return
		}
	}
	for {
		if pm.chunks && rd.AtEdge() && pm.p.chunker.Chunks() {
			if c, blocks := rd.ReadChunk(chunkMax); c != nil {
				if !pm.chunk(c, blocks) {
					return
				}
				continue
			}
		}
		e, err := rd.Next()
		if err != nil {
			pm.finish(err)
			return
		}
		if !pm.block(e) {
			return
		}
	}
}

// abortIfAsked aborts the handler when a reset could not take the
// connection over: net/http then resets the client's HTTP/2 stream.
func (pm *pump) abortIfAsked() {
	if pm.abort {
		panic(http.ErrAbortHandler)
	}
}

// newReader takes an SSE reader from the proxy's pool, so that a busy
// proxy reuses buffers rather than growing one per stream.
func (p *Proxy) newReader(body io.Reader) *sse.Reader {
	rd := p.readers.Get().(*sse.Reader)
	rd.Reset(body)
	return rd
}

func (p *Proxy) putReader(rd *sse.Reader) {
	rd.Reset(nil)
	p.readers.Put(rd)
}

// startPlan asks the fault plan for this stream's decisions and arms the
// stream-level ones. It reports whether the stream goes on.
func (pm *pump) startPlan() bool {
	plan := pm.p.opts.Faults
	if plan == nil {
		pm.chunks = pm.mayChunk()
		return true
	}
	pm.ex.Exchange.Response = pm.resp.Header
	pm.sp = plan.Stream(&pm.ex.Exchange)
	act := pm.sp.Start()
	pm.p.logFired(pm.r.Context(), pm.ex, "stream", act.Fired)
	pm.observeHead(&act)
	if act.Throttle > 0 {
		burst := act.ThrottleBurst
		if burst <= 0 {
			burst = max(act.Throttle/10, 1)
		}
		pm.lim = rate.NewLimiter(rate.Limit(act.Throttle), burst)
	}
	if act.CloseAfter > 0 {
		pm.stopTTL = pm.p.clock.AfterFunc(act.CloseAfter, func() { pm.cancel(errFaultClosed) })
	}
	if act.CloseIdle > 0 {
		pm.armIdle(act.CloseIdle)
	}
	switch act.Close {
	case faults.CloseBefore, faults.CloseAfter:
		pm.closeByFault()
		return false
	case faults.CloseReset:
		pm.reset()
		return false
	}
	if faults.Inert(pm.sp) {
		// No fault can hit the stream, now or later (a stream keeps the
		// faults it started with): its events take the way of a proxy
		// with no plan, as `fray proxy --admin` has with no profile yet.
		pm.sp = nil
	}
	pm.chunks = pm.mayChunk()
	return true
}

// closeByFault ends the stream on purpose: the upstream request is
// cancelled and the client's response ends cleanly.
func (pm *pump) closeByFault() {
	pm.cause = observe.FaultClosed
	if !pm.holding {
		pm.cancel(errFaultClosed)
	}
}

func (pm *pump) stopTimers() {
	if pm.stopTTL != nil {
		pm.stopTTL()
	}
	pm.sleeper.stop()
	if pm.idle != nil {
		pm.idle.end()
	}
}

func (pm *pump) maxBlock() int {
	if pm.p.opts.MaxBlock > 0 {
		return pm.p.opts.MaxBlock
	}
	return sse.DefaultMaxBlock
}

// write sends b to the client, in pieces of at most fragment bytes when
// fragment > 0, through the throttle when there is one. Pieces of a
// fragmented event are flushed one by one; a whole event is flushed before
// fray next waits. It reports whether the client is still there, and
// whether it waited for the throttle.
func (pm *pump) write(b []byte, fragment int) (ok, waited bool) {
	if pm.buffering {
		// A buffer of a count of events holds events of any size: past
		// MaxBuffered bytes what it holds goes out early.
		if len(pm.buffered)+len(b) > max(MaxBuffered, pm.maxBlock()) && !pm.release() {
			return false, false
		}
		pm.keep(b)
		return true, false
	}
	if len(pm.buffered) > 0 && !pm.release() {
		return false, false
	}
	piece := len(b)
	if fragment > 0 {
		piece = fragment
	}
	if pm.lim != nil {
		piece = min(piece, pm.lim.Burst())
	}
	for len(b) > 0 {
		n := min(piece, len(b))
		if pm.lim != nil {
			now := pm.p.clock.Now()
			if d := pm.lim.ReserveN(now, n).DelayFrom(now); d > 0 {
				waited = true
				if !pm.wait(d) {
					return false, waited
				}
			}
		}
		if err := pm.send(b[:n]); err != nil {
			pm.cancel(err)
			return false, waited
		}
		if fragment > 0 && pm.flush() != nil {
			return false, waited
		}
		b = b[n:]
	}
	return true, waited
}

// finish ends the stream after the reader stopped with err: cleanly when the
// upstream ended cleanly or a fault closed it, abruptly when the upstream
// failed, so the client sees what it would have seen direct.
func (pm *pump) finish(err error) {
	ctx := pm.r.Context()
	switch {
	case errors.Is(err, io.EOF):
		pm.cause = observe.Complete
		pm.p.log.LogAttrs(ctx, slog.LevelDebug, "stream ended by the upstream", pm.ex.logAttrs()...)
	case errors.Is(context.Cause(pm.resp.Request.Context()), errFaultClosed):
		// A timed close cancels from a timer: no event path set the cause.
		pm.cause = observe.FaultClosed
		pm.p.log.LogAttrs(ctx, slog.LevelDebug, "stream closed by a fault", pm.ex.logAttrs()...)
	case ctx.Err() != nil || errors.As(err, new(*clientWriteError)):
		pm.p.log.LogAttrs(ctx, slog.LevelDebug, "client went away", pm.ex.logAttrs()...)
	default:
		pm.cause = observe.UpstreamFailed
		pm.endErr = oneLine(err.Error())
		pm.p.log.LogAttrs(ctx, slog.LevelWarn, "upstream stream failed; aborting the client's response",
			append(pm.ex.logAttrs(), slog.String("error", err.Error()))...)
		pm.abort = true
	}
}
