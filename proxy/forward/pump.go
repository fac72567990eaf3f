package forward

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"

	"golang.org/x/time/rate"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/jsonrpc"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/sse"
)

// pump carries one text/event-stream response from the upstream to the
// client, on the handler's goroutine, through a pipeline of four stages,
// one block at a time:
//
//	source (source.go)     the upstream body, the SSE reader, read times -> a block and its view
//	decider (decide.go)    the fault plan's action for the view
//	sink (sink.go)         carries the action out on the client's side -> an outcome
//	recorder (recorder.go) reports the view with its outcome to the observer
//
// A stream no fault can hit, whose observer takes chunks, sends a read that
// brings nothing but whole blocks as one chunk: source -> recorder (the
// observer parses it, off the stream's path) -> sink, written as it came.
// When a cut holds the upstream's stream (hold.go), a holder goroutine
// takes the source and the recorder over.
type pump struct {
	p      *Proxy
	r      *http.Request
	resp   *http.Response
	ex     *exchange
	cancel context.CancelCauseFunc

	src  source
	dec  decider
	sink sink
	rec  recorder

	// planLater: the plan starts at the first event (a GET that may be,
	// or is, a legacy stream: one with no session).
	planLater bool
	// chunks: reads that bring whole blocks go to the observer unparsed.
	chunks bool
	// stopTTL stops a timed close, when one is armed.
	stopTTL func() bool
}

// chunkMax bounds a chunk: a read of a paced stream, an event or a few,
// is one; a burst is parsed on the stream's path, where the observer's
// goroutine, which would parse it, is the busier side.
const chunkMax = 1024

// pump streams resp to w. cancel ends the upstream request.
func (p *Proxy) pump(w http.ResponseWriter, r *http.Request, ex *exchange, resp *http.Response, cancel context.CancelCauseFunc) {
	h := w.Header()
	copyHeader(h, resp.Header)
	// Faults may change the length of the body; an SSE body has none anyway.
	h.Del("Content-Length")
	w.WriteHeader(resp.StatusCode)
	pm := &pump{p: p, r: r, resp: resp, ex: ex, cancel: cancel}
	now := p.clock.Now()
	pm.src = source{clock: p.clock, start: p.start, timed: p.observing() || p.opts.Faults != nil, readAt: now}
	pm.src.startRun = now.Sub(p.start)
	pm.src.readRun = pm.src.startRun
	pm.rec = recorder{p: p, ex: ex, status: resp.StatusCode, header: h, startRun: pm.src.startRun, cause: observe.ClientGone}
	if p.observing() {
		pm.rec.obs = observe.NewStream(p.opts.Observer)
	}
	pm.sink = sink{w: w, rc: http.NewResponseController(w), ctx: r.Context(), cancel: cancel, clock: p.clock, rec: &pm.rec, maxBlock: p.maxBlock()}
	pm.src.beforeRead = pm.beforeRead
	// Deferred first, so that it runs last: the reset of an HTTP/2 stream
	// comes after its events and its end were observed.
	defer pm.abortIfAsked()
	defer pm.endOrHold()
	if err := pm.sink.rc.Flush(); err != nil {
		return
	}
	rd := p.readers.Get().(*sse.Reader)
	pm.src.open(rd, resp.Body)
	pm.sink.rd = rd
	defer pm.sink.end()
	defer pm.stopTimers()
	// A GET that carries no session may turn out to be a legacy stream
	// when its first event announces an endpoint, and a legacy stream
	// learns its session from that event: the plan is chosen, and the head
	// reported, once that is known. A GET with a session is the standalone
	// stream of a Streamable HTTP session (a legacy client sends no
	// session header): its plan starts, and its head is reported, now, so
	// that a stream quiet until the server has something to say is seen
	// open and can be cut.
	pm.planLater = r.Method == http.MethodGet &&
		(ex.Stream == mcp.StreamLegacy || ex.Stream == mcp.StreamGet && r.Header.Get(mcp.HeaderSession) == "")
	if !pm.planLater && !pm.startPlan() {
		return
	}
	for {
		if pm.chunks && rd.AtEdge() && pm.rec.obs.Chunks() {
			if c, blocks := rd.ReadChunk(chunkMax); c != nil {
				if !pm.chunk(c, blocks) {
					return
				}
				continue
			}
		}
		e, err := pm.src.next()
		if err != nil {
			pm.finish(err)
			return
		}
		if !pm.block(e) {
			return
		}
	}
}

// beforeRead runs before the source reads from the upstream, which may
// block: what was written to the client leaves, and the view goes back to
// its pool.
func (pm *pump) beforeRead() error {
	if err := pm.sink.flush(); err != nil {
		return &clientWriteError{err}
	}
	pm.rec.rest()
	return nil
}

// block takes one block from the source through the pipeline. It reports
// whether the stream goes on.
func (pm *pump) block(e *sse.Event) bool {
	v := pm.rec.view()
	if e.Unparsed || !e.Complete {
		return pm.passRaw(e, v)
	}
	var msg jsonrpc.Message
	late := e.Dispatched && pm.classifyLater()
	scanned := e.Dispatched && !late
	if scanned {
		msg = jsonrpc.Scan(e.Data)
		if pm.ex.initReq && msg.Kind == mcp.RPCResponse {
			pm.p.noteInitialize(pm.ex, e.Data)
		}
	}
	if pm.src.index == 0 && pm.planLater {
		if string(e.Type) == "endpoint" {
			pm.rewriteEndpoint(e)
		}
		if !pm.startPlan() {
			return false
		}
	} else if string(e.Type) == "endpoint" && pm.ex.Stream == mcp.StreamLegacy {
		pm.rewriteEndpoint(e)
	}
	pm.src.describe(v, e, &msg, scanned)
	v.Unclassified = late
	act := pm.dec.decide(&v.Event)
	if len(act.Fired) > 0 && pm.p.opts.LogFaults {
		// Built only when logged: the per-event path must not allocate.
		pm.p.logFired(pm.r.Context(), pm.ex, "event "+strconv.Itoa(v.Index), act.Fired)
	}
	out := pm.sink.carry(e, &act)
	// The observer has the event before the client can: the sink
	// flushes the recorder before anything it wrote leaves.
	if out.buffered {
		pm.rec.keep(e, out, act.Fired, pm.src.readRun)
	} else {
		pm.rec.event(e, out, act.Fired, pm.src.readRun)
	}
	return out.goOn
}

// passRaw passes on bytes fray does not parse: a block past the size limit
// (and the rest of the stream), or one cut by the end of the stream, for
// the client to judge.
func (pm *pump) passRaw(e *sse.Event, v *observe.Event) bool {
	if e.Unparsed && !pm.rec.unread {
		pm.rec.unread = true
		pm.p.log.LogAttrs(pm.r.Context(), slog.LevelWarn, "event block exceeds the limit; passing the rest of the stream through unparsed",
			append(pm.ex.logAttrs(), slog.Int("limit", pm.p.maxBlock()))...)
	}
	pm.src.describeRaw(v, e)
	out := pm.sink.passRaw(e.Raw)
	pm.rec.event(nil, out, nil, pm.src.readRun)
	return out.goOn
}

// chunk takes c, the whole blocks of one read (sse.Reader.ReadChunk),
// blocks of them, to the observer, which parses them off the stream's
// path, then writes them on as they came. It reports whether the stream
// goes on.
//
// c is all the read brought, so nothing else is gathered to go with it
// (the read flushed what came before): it goes straight to the response's
// buffer, as ReverseProxy writes, which the flush before the next read
// sends. A gathering buffer would add a copy, and a pool's take and give,
// between the read and the write, which the paced latency budget counts
// (docs/performance.md).
func (pm *pump) chunk(c []byte, blocks int) bool {
	pm.src.describeChunk(pm.rec.view(), c, blocks)
	pm.rec.chunk()
	if pm.sink.gather != nil {
		ok, _ := pm.sink.write(c, 0)
		return ok
	}
	pm.rec.flush()
	pm.sink.pending = true
	if _, err := pm.sink.w.Write(c); err != nil {
		pm.cancel(err)
		return false
	}
	return true
}

// classifyLater reports whether the JSON-RPC identity of the next event's
// data can be left to the observer's Stream, which finds it off the
// stream's path and has room to now, because nothing on the path reads it.
// The stream's faults do, unless none can hit the stream (startPlan then
// leaves it no plan; and a plan that starts with the first event has not
// started yet), and so does the answer to an initialize, which the proxy
// reads for the session's protocol revision.
func (pm *pump) classifyLater() bool {
	return pm.rec.obs != nil && !pm.ex.initReq && !(pm.src.index == 0 && pm.planLater) &&
		pm.dec.plan == nil && pm.rec.obs.Classifies()
}

// mayChunk reports whether the stream's reads may go to the observer as
// chunks once its plan has started: blocks fray writes on as they came,
// whatever they hold. That takes a stream no fault can hit (no plan, or one
// that startPlan found inert: nothing armed at the stream's start either),
// whose events the proxy does not read itself: not the answer to an
// initialize (the session's revision), not a legacy stream (its endpoint
// event is rewritten).
func (pm *pump) mayChunk() bool {
	return pm.rec.obs != nil && pm.dec.plan == nil && !pm.ex.initReq && pm.ex.Stream != mcp.StreamLegacy
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
	sp := plan.Stream(&pm.ex.Exchange)
	act := sp.Start()
	pm.p.logFired(pm.r.Context(), pm.ex, "stream", act.Fired)
	pm.rec.head(&act)
	if act.Throttle > 0 {
		burst := act.ThrottleBurst
		if burst <= 0 {
			burst = max(act.Throttle/10, 1)
		}
		pm.sink.lim = rate.NewLimiter(rate.Limit(act.Throttle), burst)
	}
	if act.CloseAfter > 0 {
		pm.stopTTL = pm.p.clock.AfterFunc(act.CloseAfter, func() { pm.cancel(errFaultClosed) })
	}
	if act.CloseIdle > 0 {
		pm.src.idle = newIdleTimer(pm.p.clock, act.CloseIdle, func() { pm.cancel(errFaultClosed) })
	}
	switch act.Close {
	case faults.CloseBefore, faults.CloseAfter:
		pm.sink.closeByFault()
		return false
	case faults.CloseReset:
		pm.sink.reset()
		return false
	}
	if !faults.Inert(sp) {
		pm.dec.plan = sp
	}
	// An inert plan: no fault can hit the stream, now or later (a stream
	// keeps the faults it started with). Its events take the way of a
	// proxy with no plan, as `fray proxy --admin` has with no profile yet.
	pm.chunks = pm.mayChunk()
	return true
}

func (pm *pump) stopTimers() {
	if pm.stopTTL != nil {
		pm.stopTTL()
	}
	pm.sink.sleeper.stop()
	if pm.src.idle != nil {
		pm.src.idle.end()
	}
}

// abortIfAsked aborts the handler when a reset could not take the
// connection over: net/http then resets the client's HTTP/2 stream.
func (pm *pump) abortIfAsked() {
	if pm.sink.abort {
		panic(http.ErrAbortHandler)
	}
}

// putReader gives rd back to the proxy's pool, so that a busy proxy reuses
// buffers rather than growing one per stream.
func (p *Proxy) putReader(rd *sse.Reader) {
	rd.Reset(nil)
	p.readers.Put(rd)
}

func (p *Proxy) maxBlock() int {
	if p.opts.MaxBlock > 0 {
		return p.opts.MaxBlock
	}
	return sse.DefaultMaxBlock
}

// finish ends the stream after the reader stopped with err: cleanly when the
// upstream ended cleanly or a fault closed it, abruptly when the upstream
// failed, so the client sees what it would have seen direct.
func (pm *pump) finish(err error) {
	ctx := pm.r.Context()
	switch {
	case errors.Is(err, io.EOF):
		pm.rec.cause = observe.Complete
		pm.p.log.LogAttrs(ctx, slog.LevelDebug, "stream ended by the upstream", pm.ex.logAttrs()...)
	case errors.Is(context.Cause(pm.resp.Request.Context()), errFaultClosed):
		// A timed close cancels from a timer: no event path set the cause.
		pm.rec.cause = observe.FaultClosed
		pm.p.log.LogAttrs(ctx, slog.LevelDebug, "stream closed by a fault", pm.ex.logAttrs()...)
	case ctx.Err() != nil || errors.As(err, new(*clientWriteError)):
		pm.p.log.LogAttrs(ctx, slog.LevelDebug, "client went away", pm.ex.logAttrs()...)
	default:
		pm.rec.cause = observe.UpstreamFailed
		pm.rec.endErr = oneLine(err.Error())
		pm.p.log.LogAttrs(ctx, slog.LevelWarn, "upstream stream failed; aborting the client's response",
			append(pm.ex.logAttrs(), slog.String("error", err.Error()))...)
		pm.sink.abort = true
	}
}
