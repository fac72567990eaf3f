package proxy

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"golang.org/x/time/rate"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/mcp"
	"github.com/frayproxy/fray/proxy/jsonrpc"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/sse"
)

// pump carries one text/event-stream response from the upstream to the
// client, one event block at a time, and carries out the stream plan's
// decisions. It runs on the handler's goroutine: no goroutine of its own.
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
	ev      mcp.Event
	started time.Time
	index   int
	lose    int // events still to swallow before closing
	out     []byte
	scratch []byte
	warned  bool
	pending bool // written to the client since the last flush

	// What observers are told; kept here so that reporting an event
	// allocates nothing.
	observed bool // the response head was reported
	cause    observe.Cause
	endErr   string
	evAt     time.Duration // when the current event came from the upstream
	obs      observe.Observation
	oev      observe.Event
}

// flushBeforeRead is the upstream body as the SSE reader sees it: before
// the reader waits for more bytes, whatever was written to the client is
// flushed. So no event waits for the network, and a burst of events that
// arrived in one read leaves in one flush, not one syscall each.
type flushBeforeRead struct {
	body io.Reader
	pm   *pump
}

func (f *flushBeforeRead) Read(b []byte) (int, error) {
	if err := f.pm.flush(); err != nil {
		return 0, err
	}
	return f.body.Read(b)
}

// flush sends what was written to the client, if anything.
func (pm *pump) flush() error {
	if !pm.pending {
		return nil
	}
	pm.pending = false
	if err := pm.rc.Flush(); err != nil {
		pm.cancel(err)
		return err
	}
	return nil
}

// wait flushes, then sleeps d on the proxy's clock; it reports whether the
// client is still there.
func (pm *pump) wait(d time.Duration) bool {
	if pm.flush() != nil {
		return false
	}
	return sleep(pm.r.Context(), pm.p.clock, d)
}

// pump streams resp to w. cancel ends the upstream request.
func (p *Proxy) pump(w http.ResponseWriter, r *http.Request, ex *exchange, resp *http.Response, cancel context.CancelCauseFunc) {
	h := w.Header()
	copyHeader(h, resp.Header)
	// Faults may change the length of the body; an SSE body has none anyway.
	h.Del("Content-Length")
	w.WriteHeader(resp.StatusCode)
	pm := &pump{p: p, w: w, rc: http.NewResponseController(w), r: r, resp: resp, ex: ex, cancel: cancel, cause: observe.ClientGone}
	pm.started = p.clock.Now()
	defer pm.observeEnd()
	if err := pm.rc.Flush(); err != nil {
		return
	}
	rd := p.newReader(&flushBeforeRead{body: resp.Body, pm: pm})
	defer p.putReader(rd)
	defer pm.flush()
	defer pm.stopTimers()
	// A plain GET may turn out to be a legacy stream when its first event
	// announces an endpoint; its plan is chosen once that is known.
	if ex.Stream != mcp.StreamGet {
		if !pm.startPlan() {
			return
		}
	}
	for {
		e, err := rd.Next()
		if err != nil {
			pm.finish(err)
			return
		}
		if !pm.event(e) {
			return
		}
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
		return true
	}
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
	switch act.Close {
	case faults.CloseBefore, faults.CloseAfter:
		pm.closeByFault()
		return false
	case faults.CloseReset:
		pm.reset()
		return false
	}
	return true
}

// closeByFault ends the stream on purpose: the upstream request is
// cancelled and the client's response ends cleanly.
func (pm *pump) closeByFault() {
	pm.cause = observe.FaultClosed
	pm.cancel(errFaultClosed)
}

func (pm *pump) stopTimers() {
	if pm.stopTTL != nil {
		pm.stopTTL()
	}
}

// event handles one block from the upstream. It reports whether the
// stream goes on.
func (pm *pump) event(e *sse.Event) bool {
	if e.Unparsed || !e.Complete {
		// Past the block limit, or a block cut by the end of the stream:
		// the bytes pass as they came, for the client to judge.
		if e.Unparsed && !pm.warned {
			pm.warned = true
			pm.p.log.LogAttrs(pm.r.Context(), slog.LevelWarn, "event block exceeds the limit; passing the rest of the stream through unparsed",
				append(pm.ex.logAttrs(), slog.Int("limit", pm.maxBlock()))...)
		}
		if pm.p.observing() {
			pm.evAt = pm.p.clock.Now().Sub(pm.p.start)
		}
		ok := pm.write(e.Raw, 0)
		if pm.p.observing() {
			pm.oev = observe.Event{Index: pm.index, Raw: e.Raw, Fate: observe.Delivered, Copies: 1}
			pm.index++
			if !ok {
				pm.oev.Fate, pm.oev.Copies = observe.Undelivered, 0
			}
			pm.observeEvent(nil, nil)
		}
		return ok
	}
	return pm.complete(e)
}

func (pm *pump) maxBlock() int {
	if pm.p.opts.MaxBlock > 0 {
		return pm.p.opts.MaxBlock
	}
	return sse.DefaultMaxBlock
}

// complete handles a complete event block.
func (pm *pump) complete(e *sse.Event) bool {
	var msg jsonrpc.Message
	if e.Dispatched {
		msg = jsonrpc.Scan(e.Data)
		if pm.ex.initReq && msg.Kind == mcp.RPCResponse {
			pm.p.noteInitialize(pm.ex, e.Data)
		}
	}
	if pm.index == 0 && pm.ex.Stream == mcp.StreamGet {
		if string(e.Type) == "endpoint" {
			pm.rewriteEndpoint(e)
		}
		if !pm.startPlan() {
			return false
		}
	} else if string(e.Type) == "endpoint" && pm.ex.Stream == mcp.StreamLegacy {
		pm.rewriteEndpoint(e)
	}
	pm.index++
	// One reading of the clock serves the plan and the observers.
	var now time.Time
	observing := pm.p.observing()
	if observing || pm.sp != nil {
		now = pm.p.clock.Now()
	}
	if observing {
		pm.oev = observe.Event{
			Index: pm.index - 1, Raw: e.Raw, Parsed: true,
			Type: e.Type, ID: e.ID, HasID: e.HasID, Retry: e.Retry, HasRetry: e.HasRetry,
			Priming: e.Priming(), Dispatched: e.Dispatched,
			Message: observe.EventMessage{Kind: msg.Kind, Method: msg.Method, ID: msg.ID},
		}
		pm.evAt = now.Sub(pm.p.start)
	}
	if pm.lose > 0 {
		pm.oev.Fate = observe.Lost
		ok := pm.swallow()
		pm.observeEvent(e, nil)
		return ok
	}
	if pm.sp == nil {
		ok := pm.deliver(e, 0, 0)
		pm.observeEvent(e, nil)
		return ok
	}
	pm.ev = mcp.Event{
		Index:       pm.index - 1,
		Type:        e.Type,
		ID:          e.ID,
		HasID:       e.HasID,
		HasRetry:    e.HasRetry,
		Priming:     e.Priming(),
		Dispatched:  e.Dispatched,
		RPCKind:     msg.Kind,
		RPCMethod:   msg.Method,
		SinceStream: now.Sub(pm.started),
		SinceRun:    now.Sub(pm.p.start),
	}
	act := pm.sp.Event(&pm.ev)
	if len(act.Fired) > 0 && pm.p.opts.LogFaults {
		// Built only when logged: the per-event path must not allocate.
		pm.p.logFired(pm.r.Context(), pm.ex, "event "+strconv.Itoa(pm.index-1), act.Fired)
	}
	ok := pm.apply(e, &act)
	pm.observeEvent(e, act.Fired)
	return ok
}

// apply carries out one event decision.
func (pm *pump) apply(e *sse.Event, act *faults.EventAction) bool {
	ctx := pm.r.Context()
	if act.StallForever {
		pm.oev.Fate = observe.Stalled
		pm.cancel(errFaultClosed)
		_ = pm.flush()
		<-ctx.Done()
		return false
	}
	if act.Stall+act.Delay > 0 && !pm.wait(act.Stall+act.Delay) {
		pm.oev.Fate = observe.Undelivered
		return false
	}
	switch act.Close {
	case faults.CloseBefore:
		pm.oev.Fate = observe.Cut
		pm.closeByFault()
		return false
	case faults.CloseReset:
		pm.oev.Fate = observe.Cut
		pm.reset()
		return false
	}
	if act.Lose > 0 {
		pm.oev.Fate = observe.Lost
		pm.lose = act.Lose
		return pm.swallow()
	}
	if act.Drop {
		pm.oev.Fate = observe.Dropped
		return true
	}
	pm.mutate(e, act)
	pm.oev.Corrupted = act.Corrupt && len(e.Data) > 0
	for range act.Noise {
		if !pm.write(noiseBlock(e), 0) {
			pm.oev.Fate = observe.Undelivered
			return false
		}
	}
	if !pm.deliver(e, act.Fragment, act.Duplicate) {
		return false
	}
	if act.Close == faults.CloseAfter {
		pm.closeByFault()
		return false
	}
	return true
}

// deliver writes the event 1+dup times and records its fate.
func (pm *pump) deliver(e *sse.Event, fragment, dup int) bool {
	pm.oev.Fate = observe.Delivered
	for range 1 + dup {
		if !pm.writeEvent(e, fragment) {
			if pm.oev.Copies == 0 {
				pm.oev.Fate = observe.Undelivered
			}
			return false
		}
		pm.oev.Copies++
	}
	return true
}

// swallow takes one event away as if lost on a dying connection; after the
// last one the client's side is closed.
func (pm *pump) swallow() bool {
	pm.lose--
	if pm.lose == 0 {
		pm.closeByFault()
		return false
	}
	return true
}

// mutate applies the field changes of a decision to e.
func (pm *pump) mutate(e *sse.Event, act *faults.EventAction) {
	if act.StripRetry {
		e.RemoveField("retry")
	}
	if act.StripID {
		e.RemoveField("id")
	}
	if act.HasSetRetry {
		pm.scratch = strconv.AppendInt(pm.scratch[:0], act.SetRetry, 10)
		e.SetField("retry", pm.scratch)
	}
	if act.RewriteID != nil {
		e.SetField("id", act.RewriteID)
	}
	if act.Corrupt && len(e.Data) > 0 {
		// Half the JSON and a stray brace: no JSON parser accepts it, and
		// the event is still a well-formed SSE block.
		pm.scratch = append(append(pm.scratch[:0], e.Data[:len(e.Data)/2]...), "}{"...)
		e.SetField("data", pm.scratch)
	}
}

// noiseBlock is an SSE comment block in the line-end style of e.
func noiseBlock(e *sse.Event) []byte {
	if len(e.Raw) > 0 && e.Raw[len(e.Raw)-1] == '\r' {
		return []byte(": keepalive\r\r")
	}
	if len(e.Raw) > 1 && e.Raw[len(e.Raw)-2] == '\r' {
		return []byte(": keepalive\r\n\r\n")
	}
	return []byte(": keepalive\n\n")
}

// writeEvent writes one event in its current form and flushes it.
func (pm *pump) writeEvent(e *sse.Event, fragment int) bool {
	if !e.Modified() {
		return pm.write(e.Raw, fragment)
	}
	pm.out = e.AppendTo(pm.out[:0])
	return pm.write(pm.out, fragment)
}

// write sends b to the client, in pieces of at most fragment bytes when
// fragment > 0, through the throttle when there is one. Pieces of a
// fragmented event are flushed one by one; a whole event is flushed before
// fray next waits. It reports whether the client is still there.
func (pm *pump) write(b []byte, fragment int) bool {
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
			if d := pm.lim.ReserveN(now, n).DelayFrom(now); d > 0 && !pm.wait(d) {
				return false
			}
		}
		if _, err := pm.w.Write(b[:n]); err != nil {
			pm.cancel(err)
			return false
		}
		pm.pending = true
		if fragment > 0 && pm.flush() != nil {
			return false
		}
		b = b[n:]
	}
	return true
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
	case ctx.Err() != nil:
		pm.p.log.LogAttrs(ctx, slog.LevelDebug, "client went away", pm.ex.logAttrs()...)
	default:
		pm.cause = observe.UpstreamFailed
		pm.endErr = oneLine(err.Error())
		pm.p.log.LogAttrs(ctx, slog.LevelWarn, "upstream stream failed; aborting the client's response",
			append(pm.ex.logAttrs(), slog.String("error", err.Error()))...)
		panic(http.ErrAbortHandler)
	}
}

// observeHead reports the response head once, with the stream faults armed
// at its start (nil when the plan has not started).
func (pm *pump) observeHead(act *faults.StreamAction) {
	if pm.observed || !pm.p.observing() {
		return
	}
	pm.observed = true
	resp := upstreamResponse(pm.w.Header(), pm.resp.StatusCode, true)
	var fired []faults.Firing
	if act != nil {
		resp.Throttle, resp.CloseAfter, fired = act.Throttle, act.CloseAfter, act.Fired
	}
	pm.obs = observe.Observation{Response: resp, Fired: fired}
	pm.p.head(&pm.obs, observe.KindResponse, pm.ex)
	pm.obs.At = pm.started.Sub(pm.p.start)
	pm.p.opts.Observer.Observe(&pm.obs)
}

// observeEvent reports pm.oev, with what the client got of e (nil for
// bytes passed unparsed).
func (pm *pump) observeEvent(e *sse.Event, fired []faults.Firing) {
	if !pm.p.observing() {
		return
	}
	pm.observeHead(nil)
	at := pm.evAt
	if pm.oev.Fate == observe.Delivered {
		pm.oev.DeliveredAt = pm.p.clock.Now().Sub(pm.p.start)
	}
	if e != nil && pm.oev.Fate == observe.Delivered {
		pm.oev.DeliveredID, pm.oev.DeliveredHasID = e.ID, e.HasID
		pm.oev.DeliveredRetry, pm.oev.DeliveredHasRetry = e.Retry, e.HasRetry
		if e.Modified() {
			pm.out = e.AppendTo(pm.out[:0])
			pm.oev.Delivered = pm.out
		}
	}
	pm.obs = observe.Observation{Event: &pm.oev, Fired: fired}
	pm.p.head(&pm.obs, observe.KindEvent, pm.ex)
	pm.obs.At = at
	pm.p.opts.Observer.Observe(&pm.obs)
}

// observeEnd reports the end of the stream.
func (pm *pump) observeEnd() {
	if !pm.p.observing() {
		return
	}
	pm.observeHead(nil)
	pm.p.observeEnd(pm.ex, &observe.End{Cause: pm.cause, Error: pm.endErr})
}
