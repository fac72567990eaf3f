package forward

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/frayproxy/fray/proxy/jsonrpc"
	"github.com/frayproxy/fray/proxy/observe"
)

// Holding a stream. A cutting fault with hold = true ends the client's
// side of a stream but not the server's: fray goes on reading the
// upstream's stream and swallows what comes, as a connection that died in
// the client's direction only would. The server believes those events
// delivered, so the replay the client's resumption asks for is checked
// against every event the server produced while the client was away, not
// only those fray happened to see before the cut:
//
//	client <-x  fray  <- upstream      (the handler has returned; a holder
//	                                    goroutine reads on, reporting each
//	                                    event as lost)
//
// A hold ends, and the stream's end is reported (at the time the client's
// side ended), when the upstream ends the stream, when the client sends
// its next GET or DELETE for the session (before that request is
// forwarded or reported, so the server replays on the new stream and the
// verifier sees the end first), after HoldBound, or when the proxy ends
// every hold (EndHolds, at shutdown).

// HoldBound is the longest fray holds a stream whose client does not come
// back.
const HoldBound = 30 * time.Second

// errHoldEnded cancels a held stream's upstream request.
var errHoldEnded = errors.New("proxy: hold ended")

// hold is one held stream. Its stop is safe to call from any goroutine,
// more than once.
type hold struct {
	ctx  context.Context
	stop context.CancelFunc
	done chan struct{}
}

// holds are the streams being held, by the client's session id. The zero
// value is ready; it is safe for concurrent use.
type holds struct {
	mu sync.Mutex
	by map[string][]*hold
	wg sync.WaitGroup
}

// add registers a hold for session.
func (hs *holds) add(session string) *hold {
	ctx, stop := context.WithCancel(context.Background())
	h := &hold{ctx: ctx, stop: stop, done: make(chan struct{})}
	hs.mu.Lock()
	if hs.by == nil {
		hs.by = map[string][]*hold{}
	}
	hs.by[session] = append(hs.by[session], h)
	hs.wg.Add(1)
	hs.mu.Unlock()
	return h
}

// end unregisters h, whose holder has reported its end.
func (hs *holds) end(session string, h *hold) {
	hs.mu.Lock()
	list := slices.DeleteFunc(hs.by[session], func(o *hold) bool { return o == h })
	if len(list) == 0 {
		delete(hs.by, session)
	} else {
		hs.by[session] = list
	}
	hs.mu.Unlock()
	h.stop()
	close(h.done)
	hs.wg.Done()
}

// endSession ends the holds of session and waits until each has reported
// its end.
func (hs *holds) endSession(session string) {
	hs.mu.Lock()
	list := append([]*hold(nil), hs.by[session]...)
	hs.mu.Unlock()
	for _, h := range list {
		h.stop()
	}
	for _, h := range list {
		<-h.done
	}
}

// EndHolds ends every held stream and waits until each has reported its
// end. The engine calls it when it stops; it is safe to call at any time,
// from any goroutine.
func (p *Proxy) EndHolds() {
	p.holds.mu.Lock()
	var all []*hold
	for _, list := range p.holds.by {
		all = append(all, list...)
	}
	p.holds.mu.Unlock()
	for _, h := range all {
		h.stop()
	}
	p.holds.wg.Wait()
}

// endHoldsFor ends the holds a request of the client's ends: its next GET
// or DELETE for the session.
func (p *Proxy) endHoldsFor(ex *exchange) {
	if ex.Method == http.MethodGet || ex.Method == http.MethodDelete {
		p.holds.endSession(ex.Session)
	}
}

// endOrHold runs as the handler's pump ends: it reports the stream's end,
// or, when a fault asked for a hold, hands the source and the recorder to
// a holder goroutine that reports the end when the hold ends.
func (pm *pump) endOrHold() {
	if !pm.sink.holding || pm.src.rd == nil || pm.rec.cause == observe.ClientGone {
		pm.rec.end(pm.p.since())
		if pm.src.rd != nil {
			pm.p.putReader(pm.src.rd)
		}
		return
	}
	pm.ex.held.Store(true)
	pm.rec.endAt = pm.p.since()
	h := pm.p.holds.add(pm.ex.Session)
	go pm.p.hold(h, &pm.src, &pm.rec, pm.resp.Body, pm.cancel)
}

// hold reads src until the hold h ends, reporting each block to rec as
// lost, then reports the stream's end, as of when its client's side ended,
// and lets the upstream go.
func (p *Proxy) hold(h *hold, src *source, rec *recorder, body io.Closer, cancel context.CancelCauseFunc) {
	defer p.holds.end(rec.ex.Session, h)
	defer body.Close()
	defer cancel(errHoldEnded)
	defer p.putReader(src.rd)
	defer func() { rec.end(rec.endAt) }()
	src.beforeRead = func() error {
		rec.flush()
		rec.rest()
		return nil
	}
	stop := context.AfterFunc(h.ctx, func() { cancel(errHoldEnded) })
	defer stop()
	bound := p.clock.AfterFunc(HoldBound, h.stop)
	defer bound()
	for {
		e, err := src.next()
		if err != nil {
			return
		}
		lost := outcome{fate: observe.Lost}
		v := rec.view()
		if e.Unparsed || !e.Complete {
			src.describeRaw(v, e)
			rec.event(nil, lost, nil, src.readRun)
			continue
		}
		var msg jsonrpc.Message
		if e.Dispatched {
			msg = jsonrpc.Scan(e.Data)
		}
		src.describe(v, e, &msg, e.Dispatched)
		rec.event(e, lost, nil, src.readRun)
	}
}
