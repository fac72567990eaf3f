package forward

import (
	"bytes"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/sse"
)

// recorder is the last stage of a stream's pipeline: it tells the stream's
// observer (its observe.Stream) what became of the stream: the response
// head, each event with its fate, the events a buffer fault keeps back
// (reported when they leave), and the end. The sink flushes it before any
// byte leaves for the client. A recorder with no observer does nothing.
type recorder struct {
	obs observe.Stream // nil when no one observes
	p   *Proxy
	ex  *exchange
	// status and header are the response head the client got.
	status int
	header http.Header
	// startRun is when the stream started, since the proxy started.
	startRun time.Duration
	es       *eventScratch
	headDone bool
	// The stream's end: its cause, the upstream's error, and whether
	// bytes passed unparsed; endAt, for a held stream, is when its
	// client's side ended.
	cause  observe.Cause
	endErr string
	unread bool
	endAt  time.Duration
	// buffered are the observations of the events a buffer fault keeps
	// back, until the events leave: an observer must not take an event
	// for delivered while fray keeps it, nor at all if the client never
	// gets it.
	buffered []bufferedEvent
}

// bufferedEvent is a kept-back event's observation, its bytes copied (the
// reader reuses its own).
type bufferedEvent struct {
	ev    observe.Event
	fired []faults.Firing
	at    time.Duration // when it was read, since the proxy started
}

// eventScratch is what a recorder builds for each event: the block's view
// (oev.Event, what the stream's plan decides on) and the observation that
// reports it. Nothing of it outlives the event.
type eventScratch struct {
	obs observe.Observation
	oev observe.Event
}

// scratchPool holds the eventScratch of streams that wait for their
// upstream: thousands of idle streams hold none.
var scratchPool = sync.Pool{New: func() any { return new(eventScratch) }}

// view is the current event's view, for the source to fill and the
// decision to read; taken from the pool when the stream holds none.
func (r *recorder) view() *observe.Event {
	if r.es == nil {
		r.es = scratchPool.Get().(*eventScratch)
	}
	return &r.es.oev
}

// rest gives the view back, cleared of what it pointed to: the stream
// waits for its upstream, no event is being handled.
func (r *recorder) rest() {
	if r.es == nil {
		return
	}
	*r.es = eventScratch{}
	scratchPool.Put(r.es)
	r.es = nil
}

// flush hands on what was reported.
func (r *recorder) flush() {
	if r.obs != nil {
		r.obs.Flush()
	}
}

// head reports the response head once, with the stream faults armed at
// its start (nil when the plan has not started).
func (r *recorder) head(act *faults.StreamAction) {
	if r.headDone || r.obs == nil {
		return
	}
	r.headDone = true
	resp := upstreamResponse(r.header, r.status, true)
	var fired []faults.Firing
	if act != nil {
		resp.Throttle, resp.CloseAfter, fired = act.Throttle, act.CloseAfter, act.Fired
	}
	r.view()
	o := &r.es.obs
	*o = observe.Observation{Response: resp, Fired: fired}
	r.p.head(o, observe.KindResponse, r.ex, r.startRun)
	r.obs.Observe(o)
}

// event reports the current event, read at at, with what became of it
// (out) and what the client got of e (nil for bytes passed unparsed).
func (r *recorder) event(e *sse.Event, out outcome, fired []faults.Firing, at time.Duration) {
	if r.obs == nil {
		return
	}
	r.describe(e, out, at)
	r.emit(&r.es.oev, fired, at)
}

// keep keeps the observation of an event a buffer fault keeps back, as event
// would make it, with its bytes copied.
func (r *recorder) keep(e *sse.Event, out outcome, fired []faults.Firing, at time.Duration) {
	if r.obs == nil {
		return
	}
	r.describe(e, out, at)
	o := r.es.oev
	for _, b := range []*[]byte{&o.Raw, &o.Type, &o.ID, &o.Data, &o.RPCMethod, &o.RPCID, &o.Delivered, &o.DeliveredID} {
		*b = bytes.Clone(*b)
	}
	r.buffered = append(r.buffered, bufferedEvent{ev: o, fired: slices.Clone(fired), at: at})
}

// unbuffer reports the kept-back events: delivered now, or, when the
// client went away first, undelivered.
func (r *recorder) unbuffer(delivered bool) {
	now := r.p.since()
	for i := range r.buffered {
		h := &r.buffered[i]
		if delivered {
			h.ev.DeliveredAt = now
		} else {
			h.ev.Fate, h.ev.DeliveredAt = observe.Undelivered, 0
		}
		r.emit(&h.ev, h.fired, h.at)
	}
	r.buffered = r.buffered[:0]
}

// describe fills the current event's view with what became of it. It
// left when it was read (at), unless fray waited first.
func (r *recorder) describe(e *sse.Event, out outcome, at time.Duration) {
	r.head(nil)
	o := r.view()
	o.Fate, o.Copies, o.Corrupted = out.fate, out.copies, out.corrupted
	if out.fate != observe.Delivered {
		return
	}
	o.DeliveredAt = at
	if out.waited {
		o.DeliveredAt = r.p.since()
	}
	if e != nil {
		o.DeliveredID, o.DeliveredHasID = e.ID, e.HasID
		o.DeliveredRetry, o.DeliveredHasRetry = e.Retry, e.HasRetry
		o.Delivered = out.written
	}
}

// emit hands the observer event o, read at at.
func (r *recorder) emit(o *observe.Event, fired []faults.Firing, at time.Duration) {
	r.view()
	ob := &r.es.obs
	*ob = observe.Observation{Event: o, Fired: fired}
	r.p.head(ob, observe.KindEvent, r.ex, at)
	r.obs.Observe(ob)
}

// chunk hands the observer the current view, the whole blocks of one read
// (source.describeChunk), to parse off the stream's path.
func (r *recorder) chunk() {
	r.head(nil)
	ob := &r.es.obs
	*ob = observe.Observation{Event: &r.es.oev}
	r.p.head(ob, observe.KindEvent, r.ex, r.es.oev.SinceRun)
	r.obs.ObserveChunk(ob)
}

// end reports the end of the stream, at at: its last observation.
func (r *recorder) end(at time.Duration) {
	if r.obs == nil {
		return
	}
	r.head(nil)
	r.view()
	o := &r.es.obs
	*o = observe.Observation{End: &observe.End{Cause: r.cause, Error: r.endErr, Unread: r.unread}}
	r.p.head(o, observe.KindEnd, r.ex, at)
	r.obs.Observe(o)
	r.obs.Flush()
	r.rest()
}
