package forward

import (
	"log/slog"
	"strconv"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/jsonrpc"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/sse"
)

// outcome is what carrying out a decision did to one event: the one place
// an event's fate is decided.
type outcome struct {
	fate      observe.Fate
	copies    int
	corrupted bool
	// waited: fray waited (a delay, a stall, the throttle) before the
	// event went out, so it left later than it came.
	waited bool
	// goOn: the stream goes on after the event.
	goOn bool
	// held: a buffer fault holds the event back; it is reported when it
	// leaves (intermediary.go).
	held bool
}

// block handles one block from the upstream. It reports whether the
// stream goes on.
func (pm *pump) block(e *sse.Event) bool {
	if e.Unparsed || !e.Complete {
		return pm.passRaw(e)
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
	if pm.index == 0 && pm.planLater {
		if string(e.Type) == "endpoint" {
			pm.rewriteEndpoint(e)
		}
		if !pm.startPlan() {
			return false
		}
	} else if string(e.Type) == "endpoint" && pm.ex.Stream == mcp.StreamLegacy {
		pm.rewriteEndpoint(e)
	}
	pm.view(e, &msg, scanned)
	pm.current().oev.Unclassified = late
	var out outcome
	var fired []faults.Firing
	switch {
	case pm.lose > 0:
		out = pm.swallow()
	case pm.sp == nil:
		out = pm.deliver(e, 0, 0)
	default:
		out, fired = pm.decide(e)
	}
	// The observers see an event before the client can: flushed first,
	// it could reach the client, and the client act on it (resume, send
	// DELETE), before the verifier knew it was sent. It leaves at the
	// next read, with the rest of its burst.
	if out.held {
		pm.holdObservation(e, out, fired)
	} else {
		pm.observeEvent(e, out, fired)
	}
	return out.goOn
}

// decide asks the stream plan what to do with e, the current event, and
// carries it out; it returns what came of it and the faults that fired.
// (Apart from block, so that a stream with no plan sets up no decision.)
func (pm *pump) decide(e *sse.Event) (outcome, []faults.Firing) {
	act := pm.sp.Event(&pm.current().oev.Event)
	if len(act.Fired) > 0 && pm.p.opts.LogFaults {
		// Built only when logged: the per-event path must not allocate.
		pm.p.logFired(pm.r.Context(), pm.ex, "event "+strconv.Itoa(pm.current().oev.Index), act.Fired)
	}
	return pm.apply(e, &act), act.Fired
}

// classifyLater reports whether the JSON-RPC identity of the next event's
// data can be left to the observer: it is a Classifier (the engine's
// queue) that finds it off the stream's path and has room to now, and
// nothing on the path reads it. The stream's faults do, unless none can
// hit the stream (startPlan then leaves it no plan; and a plan that starts
// with the first event has not started yet), and so does the answer to an
// initialize, which the proxy reads for the session's protocol revision.
func (pm *pump) classifyLater() bool {
	return pm.p.classifier != nil && !pm.ex.initReq && !(pm.index == 0 && pm.planLater) &&
		pm.sp == nil && pm.p.classifier.Classifies()
}

// view fills the current event's view from e: the one description of the
// block that the fault decision and the observers read. msg is the
// JSON-RPC identity of e's data, scanned when jsonrpc.Scan found it there.
func (pm *pump) view(e *sse.Event, msg *jsonrpc.Message, scanned bool) {
	v := &pm.current().oev
	v.SetBlock(pm.index, e, pm.readRun-pm.startRun, pm.readRun)
	v.RPCKind, v.RPCMethod, v.RPCID, v.Scanned = msg.Kind, msg.Method, msg.ID, scanned
	pm.index++
}

// passRaw passes on bytes fray does not parse: a block past the size limit
// (and the rest of the stream), or one cut by the end of the stream, for
// the client to judge.
func (pm *pump) passRaw(e *sse.Event) bool {
	if e.Unparsed && !pm.warned {
		pm.warned = true
		pm.p.log.LogAttrs(pm.r.Context(), slog.LevelWarn, "event block exceeds the limit; passing the rest of the stream through unparsed",
			append(pm.ex.logAttrs(), slog.Int("limit", pm.maxBlock()))...)
	}
	pm.current().oev = observe.Event{Event: mcp.Event{Index: pm.index, Raw: e.Raw}}
	pm.index++
	out := outcome{fate: observe.Delivered, copies: 1, goOn: true}
	if ok, _ := pm.write(e.Raw, 0); !ok {
		out = outcome{fate: observe.Undelivered}
	}
	pm.observeEvent(nil, out, nil)
	return out.goOn
}

// apply carries out one event decision and returns what came of it.
func (pm *pump) apply(e *sse.Event, act *faults.EventAction) outcome {
	if act.StallForever {
		pm.cancel(errFaultClosed)
		_ = pm.flush()
		<-pm.r.Context().Done()
		return outcome{fate: observe.Stalled}
	}
	waited := act.Stall+act.Delay > 0
	if waited && !pm.wait(act.Stall+act.Delay) {
		return outcome{fate: observe.Undelivered, waited: true}
	}
	pm.holding = act.Hold && (act.Close != faults.CloseNone || act.Lose > 0)
	switch act.Close {
	case faults.CloseBefore:
		pm.closeByFault()
		return outcome{fate: observe.Cut, waited: waited}
	case faults.CloseReset:
		pm.reset()
		return outcome{fate: observe.Cut, waited: waited}
	}
	if act.Lose > 0 {
		pm.lose = act.Lose
		out := pm.swallow()
		out.waited = waited
		return out
	}
	if act.Drop {
		return outcome{fate: observe.Dropped, waited: waited, goOn: true}
	}
	pm.mutate(e, act)
	pm.buffering = act.Buffer
	out := pm.deliverWith(e, act.Fragment, act.Duplicate, act.Noise)
	pm.buffering = false
	out.held = act.Buffer && out.fate == observe.Delivered
	out.waited = out.waited || waited
	out.corrupted = act.Corrupt && len(e.Data) > 0
	if out.goOn && act.Close == faults.CloseAfter {
		pm.closeByFault()
		out.goOn = false
	}
	return out
}

// deliver writes the event 1+dup times.
func (pm *pump) deliver(e *sse.Event, fragment, dup int) outcome {
	return pm.deliverWith(e, fragment, dup, 0)
}

// deliverWith writes noise comment blocks, then the event 1+dup times.
// What fray inserts goes between whole blocks: after the event's prefix
// (the stream's BOM, or the LF that completes the previous block's CR),
// written once, and, between copies of a CRLF block dispatched at its CR,
// after the LF that completes it. So a client reads the same events, plus
// the noise and the copies, whatever parser it uses.
func (pm *pump) deliverWith(e *sse.Event, fragment, dup, noise int) outcome {
	out := outcome{fate: observe.Delivered, goOn: true}
	b := e.Raw
	if e.Modified() {
		pm.out = e.AppendTo(pm.out[:0])
		b = pm.out
	}
	if noise > 0 || dup > 0 {
		pre := e.Prefix()
		ok, w := pm.write(b[:pre], 0)
		out.waited = out.waited || w
		nb := noiseBlock(e)
		for i := 0; ok && i < noise; i++ {
			ok, w = pm.write(nb, 0)
			out.waited = out.waited || w
		}
		if !ok {
			return outcome{fate: observe.Undelivered, waited: out.waited}
		}
		b = b[pre:]
	}
	for i := range 1 + dup {
		if i > 0 && e.CRLF() && len(b) > 0 && b[len(b)-1] == '\r' {
			ok, w := pm.write(lf, 0)
			out.waited = out.waited || w
			if !ok {
				out.goOn = false
				return out
			}
		}
		ok, w := pm.write(b, fragment)
		out.waited = out.waited || w
		if !ok {
			if out.copies == 0 {
				out.fate = observe.Undelivered
			}
			out.goOn = false
			return out
		}
		out.copies++
	}
	return out
}

// swallow takes one event away as if lost on a dying connection; after the
// last one the client's side is closed.
func (pm *pump) swallow() outcome {
	pm.lose--
	if pm.lose == 0 {
		pm.closeByFault()
		return outcome{fate: observe.Lost}
	}
	return outcome{fate: observe.Lost, goOn: true}
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

// The comment blocks keepalive-noise writes, one per line-end style.
var (
	noiseLF   = []byte(": keepalive\n\n")
	noiseCRLF = []byte(": keepalive\r\n\r\n")
	noiseCR   = []byte(": keepalive\r\r")
	lf        = []byte("\n")
)

// noiseBlock is an SSE comment block in the line-end style of e's lines,
// not of its last bytes: a CRLF block dispatched at its CR ends in a CR,
// and a bare-CR comment there would merge the events that follow for a
// parser that splits lines on LF.
func noiseBlock(e *sse.Event) []byte {
	switch {
	case e.CRLF():
		return noiseCRLF
	case e.CR():
		return noiseCR
	}
	return noiseLF
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
	o := &pm.current().obs
	*o = observe.Observation{Response: resp, Fired: fired}
	pm.p.head(o, observe.KindResponse, pm.ex, pm.startRun)
	pm.observe(o)
}

// observeEvent reports the current block with its outcome and what the
// client got of e (nil for bytes passed unparsed). The block came with the
// last read; it left then too, unless fray waited first.
func (pm *pump) observeEvent(e *sse.Event, out outcome, fired []faults.Firing) {
	if !pm.p.observing() {
		return
	}
	at := pm.describeEvent(e, out)
	pm.emitEvent(&pm.current().oev, fired, at)
}

// describeEvent fills the current event's view with what became of it
// (out), and returns when it was read, since the proxy started.
func (pm *pump) describeEvent(e *sse.Event, out outcome) time.Duration {
	pm.observeHead(nil)
	at := pm.readRun
	o := &pm.current().oev
	o.Fate, o.Copies, o.Corrupted = out.fate, out.copies, out.corrupted
	if out.fate == observe.Delivered {
		o.DeliveredAt = at
		if out.waited {
			o.DeliveredAt = pm.p.clock.Now().Sub(pm.p.start)
		}
		if e != nil {
			o.DeliveredID, o.DeliveredHasID = e.ID, e.HasID
			o.DeliveredRetry, o.DeliveredHasRetry = e.Retry, e.HasRetry
			if e.Modified() {
				o.Delivered = pm.out // deliverWith wrote it there
			}
		}
	}
	return at
}

// emitEvent hands the observers event o, read at at.
func (pm *pump) emitEvent(o *observe.Event, fired []faults.Firing, at time.Duration) {
	ob := &pm.current().obs
	*ob = observe.Observation{Event: o, Fired: fired}
	pm.p.head(ob, observe.KindEvent, pm.ex, at)
	pm.observe(ob)
	pm.reported = pm.p.kicker != nil
}

// observe hands o to the observers: an event by way of the stream's
// Stage, when the observer is a Stager that has one to lend, anything
// else once the events staged before it are committed. The first event
// since the stream last wrote or waited goes straight to the observer:
// an event that comes alone, as on a paced stream, costs one hand-over
// rather than a Stage lent, filled, committed and given back; the events
// of a burst that follow it take the Stage, after it.
func (pm *pump) observe(o *observe.Observation) {
	if pm.p.stager != nil && o.Kind == observe.KindEvent {
		if !pm.burst {
			pm.burst = true
			pm.p.opts.Observer.Observe(o)
			return
		}
		if pm.stage == nil {
			pm.stage = pm.p.stager.Stage()
		}
		if pm.stage != nil {
			pm.stage.Observe(o)
			return
		}
	}
	pm.commit()
	pm.p.opts.Observer.Observe(o)
}

// commit hands the observers the events staged so far.
func (pm *pump) commit() {
	if pm.stage != nil {
		pm.stage.Commit()
	}
}

// releaseStage commits the staged events and gives the Stage back: the
// stream writes to its client or waits, which may block, or has ended. A
// stream holds a Stage only while it handles events between two writes.
func (pm *pump) releaseStage() {
	pm.burst = false
	if pm.stage != nil {
		pm.stage.Release()
		pm.stage = nil
	}
}

// observeEnd reports the end of the stream: now, or for a held stream
// when its client's side ended.
func (pm *pump) observeEnd() {
	if !pm.p.observing() {
		return
	}
	pm.observeHead(nil)
	at := pm.p.since()
	if pm.holding && pm.endAt > 0 {
		at = pm.endAt
	}
	// The end is the stream's last observation.
	pm.releaseStage()
	pm.p.observeEndAt(pm.ex, &observe.End{Cause: pm.cause, Error: pm.endErr, Unread: pm.warned}, at)
}
