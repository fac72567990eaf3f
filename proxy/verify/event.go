package verify

import (
	"fmt"
	"net/http"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// onEvent records one SSE event: what the upstream sent (for the server
// checks) and what the client got (for the client and end-to-end checks).
func (v *Verifier) onEvent(o *observe.Observation) {
	x := v.exch[o.Exchange]
	if x == nil || x.cli == nil {
		return
	}
	e := o.Event
	s := x.sess
	s.lastAt = max(s.lastAt, o.At)
	x.events++
	v.noteEventFaults(x, e, o)
	if !e.Parsed {
		x.unparsed = true
		if e.Fate == observe.Delivered {
			x.cli.idUncertain = true
		}
		if !x.primingDone {
			x.primingDone = true
			if c, ok := primingCheck(x); ok {
				v.excuse(c, "the first block passed through unparsed")
			}
		}
		return
	}
	if !x.primingDone && (e.HasID || e.Dispatched || len(e.Type) > 0) {
		x.primingDone = true
		v.judgePriming(x, e, o.At)
	}
	if e.HasRetry {
		x.sawRetry = true
	}
	legacy := x.stream == mcp.StreamLegacy || s.legacy
	replay := false
	if !legacy && e.HasID && len(e.ID) > 0 {
		replay = v.serverID(x, e, o.At)
	}
	if k := e.RPCKind; k == mcp.RPCResponse || k == mcp.RPCError {
		x.srv.respSent = true
	}
	if r := x.resume; r != nil && r.inReplay && !replay && !e.Priming && e.Dispatched {
		r.inReplay = false
		v.judgeReplay(x, o.At)
	}
	v.clientEvent(x, e, o, replay, legacy)
}

// noteEventFaults remembers the faults that ended the stream or changed
// its ids.
func (v *Verifier) noteEventFaults(x *exch, e *observe.Event, o *observe.Observation) {
	if len(o.Fired) == 0 {
		return
	}
	if f := faultWith(o.Fired, faults.EndsStream|faults.HoldsStream); f != nil && x.endFault == nil {
		x.endFault = f
	}
	if f := faultWith(o.Fired, faults.HidesIDs); f != nil {
		x.idFault = f
		x.cli.idFault = f
	}
}

// primingCheck says which priming check a stream falls under, and whether
// any does.
func primingCheck(x *exch) (checkID, bool) {
	switch {
	case x.stream == mcp.StreamLegacy:
		return 0, false
	case x.method == http.MethodPost && x.stream == mcp.StreamPost:
		return cPriming, true
	case x.method == http.MethodGet && !x.fwdHasLEID:
		return cPrimingGet, true
	}
	return 0, false
}

// judgePriming judges the first event the upstream sent on a stream (e
// nil: the upstream ended the stream with none).
func (v *Verifier) judgePriming(x *exch, e *observe.Event, at time.Duration) {
	c, ok := primingCheck(x)
	if !ok {
		return
	}
	if !mcp.Primes(x.protocol) {
		if x.protocol == "" {
			v.excuse(c, "no protocol revision negotiated for the stream")
		} else {
			v.excuse(c, "protocol revision "+x.protocol+" owes no priming event")
		}
		return
	}
	v.apply(c)
	if e != nil && e.Priming {
		return
	}
	what := "the standalone GET stream"
	if c == cPriming {
		what = "the stream answering POST"
		if len(x.reqs) > 0 {
			what += fmt.Sprintf(" %s (id %s)", x.reqs[0].method, x.reqs[0].id)
		}
	}
	var msg string
	switch {
	case e == nil:
		msg = what + " ended without sending any event"
	case !e.HasID || len(e.ID) == 0:
		msg = what + " began with an event without an id"
	default:
		msg = what + " began with an event that had data"
	}
	ev := evidence(msg, x.sess, x.num, at)
	if e != nil && e.HasID && len(e.ID) > 0 {
		ev.EventIDs = []string{string(e.ID)}
	}
	v.find(c, levelError, ev)
	if x.cli != nil {
		x.cli.noPriming = true
	}
}

// clientEvent records what the client got of an event.
func (v *Verifier) clientEvent(x *exch, e *observe.Event, o *observe.Observation, replay, legacy bool) {
	l := x.cli
	msg := e.Dispatched && e.RPCKind != mcp.RPCNone
	if e.Fate != observe.Delivered {
		if msg {
			v.keep(x, e, o, legacy)
		}
		return
	}
	if e.DeliveredHasID && !legacy {
		v.deliveredID(x, e)
	}
	if e.DeliveredHasRetry {
		l.retry, l.hasRetry = time.Duration(e.DeliveredRetry)*time.Millisecond, true
		l.retryFault = faultWith(o.Fired, faults.ChangesRetry)
	}
	if !msg {
		return
	}
	if e.Corrupted {
		v.keep(x, e, o, legacy)
		return
	}
	if !replay {
		v.apply(cNoLost)
	}
	if e.HasID {
		x.srv.recover(string(e.ID), "")
	}
	if k := e.RPCKind; k == mcp.RPCResponse || k == mcp.RPCError {
		v.deliverResponse(x.sess, string(e.RPCID), x, e.Copies, o.At)
	}
}

// deliveredID follows the id the client holds, under WHATWG rules: an
// empty id resets it.
func (v *Verifier) deliveredID(x *exch, e *observe.Event) {
	l := x.cli
	id := string(e.DeliveredID)
	if id == "" {
		l.lastID, l.hasID = "", false
		return
	}
	l.lastID, l.hasID, l.everID = id, true, true
	rewritten := !e.HasID || string(e.ID) != id
	x.sess.delivered.put(id, deliveredRec{lg: l, rewritten: rewritten})
	// Only on the stream the event was dropped from: an id delivered
	// after a resumption from before the drop does not excuse the replay.
	for _, k := range x.srv.kept {
		if k.fate == observe.Dropped && k.exchange == x.num {
			k.laterID = true
		}
	}
}

// keep enters a message that did not reach the client whole, unless no
// replay could ever bring it.
func (v *Verifier) keep(x *exch, e *observe.Event, o *observe.Observation, legacy bool) {
	k := &kept{
		rpcKind:   e.RPCKind,
		fate:      e.Fate,
		corrupted: e.Fate == observe.Delivered && e.Corrupted,
		at:        o.At,
		exchange:  x.num,
		fault:     firstFault(faultWith(o.Fired, anyTrait), x.endFault),
		cli:       x.cli,
		srv:       x.srv,
	}
	if e.HasID {
		k.id = string(e.ID)
	}
	if k.rpcKind == mcp.RPCResponse || k.rpcKind == mcp.RPCError {
		k.rpcID = string(e.RPCID)
	}
	switch {
	case legacy:
		v.excuse(cNoLost, "legacy transport")
		return
	case !mcp.Resumable(x.cli.protocol):
		v.excuse(cNoLost, "protocol without resumability")
		return
	case len(x.srv.kept) >= maxKept:
		v.excuse(cNoLost, "more undelivered messages than the ledger holds")
		return
	}
	x.srv.kept = append(x.srv.kept, k)
}

// recover forgets the kept messages that reached the client after all:
// by upstream event id, or (rpcID) by the response's JSON-RPC id.
func (l *logical) recover(id, rpcID string) {
	if len(l.kept) == 0 {
		return
	}
	out := l.kept[:0]
	for _, k := range l.kept {
		if id != "" && k.id == id || rpcID != "" && k.rpcID == rpcID {
			continue
		}
		out = append(out, k)
	}
	clear(l.kept[len(out):])
	l.kept = out
}

// deliverResponse counts a response delivered to the client whole
// (e2e.every-request-answered, e2e.no-message-duplicated).
func (v *Verifier) deliverResponse(s *session, id string, x *exch, copies int, at time.Duration) {
	r := s.pending[id]
	if r == nil {
		r, _ = s.answered.get(id)
	}
	if r == nil {
		return
	}
	v.apply(cNoDup)
	for range copies - 1 {
		v.excuse(cNoDup, "copies made by fray's duplicate fault")
	}
	r.delivered++
	if r.delivered > r.forwarded {
		switch {
		case x.leidByFray:
			v.excuse(cNoDup, "replayed after fray changed Last-Event-ID")
		case x.blamedDup != "":
			v.excuse(cNoDup, "explained by "+x.blamedDup)
		default:
			ev := evidence(fmt.Sprintf("the response to request %s (%s) reached the client %d times; the request was forwarded %d", id, r.method, r.delivered, r.forwarded), s, x.num, at)
			ev.Related = related(r.exchange)
			v.find(cNoDup, levelError, ev)
		}
	}
	if r.delivered != 1 || r.settled {
		return
	}
	delete(s.pending, id)
	s.answered.put(id, r)
	v.apply(cAnswered)
	if l := r.lg; l != nil {
		l.recover("", id)
		if l.reqs > 0 {
			l.reqs--
		}
		if l.reqs == 0 && l.state == lgPending {
			l.owed = false
			v.finishLogical(l, at)
		}
	}
}
