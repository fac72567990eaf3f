package verify

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/jsonrpc"
	"github.com/frayproxy/fray/proxy/mcp"
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
	msg := e.Parsed && e.Dispatched && e.RPCKind != mcp.RPCNone
	if msg {
		// Only a JSON-RPC message is activity: comments and keep-alives
		// do not keep a silent session's requests from falling due.
		s.lastAt = max(s.lastAt, o.At)
		x.upMsgs++
	}
	x.events++
	noteDelivered(x, e)
	if len(o.Fired) > 0 {
		v.noteEventFaults(x, o)
	}
	if v.stateless != nil {
		v.statelessEvent(x, e, o)
	}
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
	if e.HasID && len(e.ID) > 0 {
		x.sawID = true
		v.countID(x, e.ID)
	}
	legacy := x.stream == mcp.StreamLegacy || s.legacy
	replay := false
	// The id's hash and entry in the session's book, for an id the
	// ledger keeps: the client's window most often takes the same id.
	up := upID{entry: -1}
	if !legacy && e.HasID && len(e.ID) > 0 {
		up.hash = idHash(e.ID)
		replay, up.entry = v.serverID(x, e, up.hash, o.At)
	}
	if e.RPCKind.Answers() {
		x.srv.respSent = true
	}
	if r := x.resume; r != nil && r.inReplay && !replay && !e.Priming && e.Dispatched {
		r.inReplay = false
		v.judgeReplay(x, o.At)
	}
	if msg && !legacy {
		v.relatedMessage(x, e, o)
	}
	v.clientEvent(x, e, o, up, replay, legacy)
}

// upID is what the ledger learned of the id the upstream sent with an
// event: its idHash, and its entry in the session's idBook (-1: none).
type upID struct {
	hash  uint64
	entry int32
}

// noteEventFaults remembers the faults that ended the stream or changed
// its ids, of those that fired on an event (most events have none).
func (v *Verifier) noteEventFaults(x *exch, o *observe.Observation) {
	if f := faultWith(o.Fired, faults.EndsStream|faults.HoldsStream); f != nil && x.endFault == nil {
		x.endFault = f
	}
	if f := sameFault(x.idFault, o.Fired, faults.HidesIDs); f != nil {
		x.idFault = f
		x.cli.idFault = f
	}
	if r := x.resume; r != nil && !r.held {
		r.held = slices.ContainsFunc(o.Fired, func(f faults.Firing) bool { return f.Traits.Any(faults.HoldsStream | faults.Delays) })
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

// judgePriming judges the first event the upstream sent on a POST stream
// (e nil: the upstream ended the stream with none).
func (v *Verifier) judgePriming(x *exch, e *observe.Event, at time.Duration) {
	c, ok := primingCheck(x)
	if !ok || c != cPriming {
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
	what := "the stream answering POST"
	if len(x.reqs) > 0 {
		what += fmt.Sprintf(" %s (id %s)", x.reqs[0].method, x.reqs[0].id)
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
}

// clientEvent records what the client got of an event; up is what
// serverID learned of the id the upstream sent, when it has one and the
// stream is not legacy.
func (v *Verifier) clientEvent(x *exch, e *observe.Event, o *observe.Observation, up upID, replay, legacy bool) {
	l := x.cli
	msg := e.Dispatched && e.RPCKind != mcp.RPCNone
	if e.Fate != observe.Delivered {
		if msg {
			v.keep(x, e, o, legacy)
		}
		return
	}
	if e.DeliveredHasID && !legacy {
		v.deliveredID(x, e, up)
	}
	if e.DeliveredHasRetry {
		l.retry, l.hasRetry = time.Duration(e.DeliveredRetry)*time.Millisecond, true
		l.retryFault = sameFault(l.retryFault, o.Fired, faults.ChangesRetry)
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
		x.srv.recover(e.ID, "")
	}
	if e.RPCKind.Answers() {
		v.deliverResponse(x.sess, string(e.RPCID), x, e.Copies, o.At)
	}
}

// deliveredID follows the id the client holds, under WHATWG rules: an
// empty id resets it. up is what serverID learned of the id the upstream
// sent, which the client got unless fray rewrote it: nothing between the
// two changes the session's id book, so that the entry serverID found or
// made is still the id's.
func (v *Verifier) deliveredID(x *exch, e *observe.Event, up upID) {
	l := x.cli
	id := e.DeliveredID
	if len(id) == 0 {
		l.lastID, l.hasID = l.lastID[:0], false
		return
	}
	l.lastID, l.hasID, l.everID = append(l.lastID[:0], id...), true, true
	rewritten := !e.HasID || string(e.ID) != string(id)
	if rewritten {
		up = upID{hash: idHash(id), entry: -1}
	}
	rec, ok := x.sess.ids.refDelivered(id, up.hash, up.entry, l)
	if ok && rec.lg != l && !slices.Contains(rec.also, l) && len(rec.also) < maxAlsoOn {
		rec.also = append(rec.also, l)
	}
	rec.rewritten = rec.rewritten || rewritten
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
	switch {
	case legacy:
		v.excuse(cNoLost, "legacy transport")
		return
	case !mcp.Resumable(x.cli.protocol):
		v.excuse(cNoLost, "protocol without resumability")
		return
	case len(x.srv.kept) >= maxKept:
		v.excuse(cNoLost, keptFull)
		return
	case reachedByReplay(x, e):
		// A stream fray cut and read on reported it after the client's
		// resumption got it: recover found nothing to forget then.
		return
	}
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
	if k.rpcKind.Answers() {
		k.rpcID = string(e.RPCID)
	}
	x.srv.kept = append(x.srv.kept, k)
}

// reachedByReplay says whether the message e carries, which never left
// for the client on its own stream, already reached the client on another
// stream of its session: its upstream id delivered unchanged, or, for a
// response, its request answered.
func reachedByReplay(x *exch, e *observe.Event) bool {
	if e.Fate == observe.Delivered {
		return false
	}
	if e.HasID {
		if rec, ok := x.sess.ids.delivered(e.ID); ok && !rec.rewritten {
			return true
		}
	}
	if e.RPCKind.Answers() {
		r, ok := getBytes(x.sess.answered, e.RPCID)
		return ok && r != nil && r.delivered > 0
	}
	return false
}

// recover forgets the kept messages that reached the client after all:
// by upstream event id, or (rpcID) by the response's JSON-RPC id.
func (l *logical) recover(id []byte, rpcID string) {
	if len(l.kept) == 0 {
		return
	}
	out := l.kept[:0]
	for _, k := range l.kept {
		if len(id) > 0 && k.id == string(id) || rpcID != "" && k.rpcID == rpcID {
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
		case x.blamedDup != "" && v.failsAtError(x.blamedDup):
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
	s.unpend(r)
	s.answered.put(id, r)
	v.apply(cAnswered)
	if l := r.lg; l != nil {
		l.recover(nil, id)
		if l.reqs > 0 {
			l.reqs--
		}
		if r.cancelled && l.cancelled > 0 {
			l.cancelled--
		}
		if l.reqs == 0 && l.state == lgPending {
			l.owed = false
			v.finishLogical(l, at)
		}
	}
}

// judgePrimingGet judges a standalone GET stream the upstream ended: if it
// never sent an event id, the client has nothing to resume from
// (server.priming-event-get). A stream that a DELETE of its session ended,
// or that fray or the client ended, is not the server's polling.
func (v *Verifier) judgePrimingGet(x *exch, end *observe.End, at time.Duration) {
	c, ok := primingCheck(x)
	if !ok || c != cPrimingGet || x.unparsed {
		return
	}
	switch {
	case end.Cause != observe.Complete:
		return
	case x.sess.deleteAt > 0 && at >= x.sess.deleteAt:
		v.excuse(c, "ended after the client's DELETE of the session")
		return
	case !mcp.Primes(x.protocol):
		v.excuse(c, "protocol revision "+cmp.Or(x.protocol, "unknown")+" owes no priming event")
		return
	}
	v.apply(c)
	if x.sawID {
		return
	}
	v.find(c, levelError, evidence(fmt.Sprintf("the server closed the standalone GET stream after %s without having sent an event id: the client has nothing to resume from", (at-x.at).Round(time.Millisecond)), x.sess, x.num, at))
}

// relatedMessage judges what a JSON-RPC message the upstream sent says
// about the request it relates to: a progress notification belongs on
// its request's stream (server.messages-on-own-stream), and an error
// answering a request whose stream was cut must not say the cut cancelled
// it (server.disconnect-not-cancel).
func (v *Verifier) relatedMessage(x *exch, e *observe.Event, o *observe.Observation) {
	if x.stateless {
		// server.silent-after-cancel judges these from 2026-07-28 on.
		return
	}
	s := x.sess
	switch e.RPCKind {
	case mcp.RPCNotification:
		// On a POST stream, another request's progress is possible only
		// when the session runs several at once: the token is looked up
		// then only, so the common stream costs nothing.
		// No request waits for progress: no token can match, and the
		// message is not scanned again.
		if len(s.tokens) == 0 || x.srv.kind != mcp.StreamGet && len(s.tokens) < 2 {
			return
		}
		if string(e.RPCMethod) != "notifications/progress" {
			return
		}
		m := jsonrpc.Scan(e.Data)
		if r := s.tokens[string(m.ProgressToken())]; r != nil {
			v.judgeOwnStream(x, r, o.At)
		}
	case mcp.RPCError:
		r := s.pending[string(e.RPCID)]
		if r == nil {
			r, _ = s.answered.get(string(e.RPCID))
		}
		if r != nil {
			v.judgeCancelled(x, r, e, o.At)
		}
	}
}

// judgeOwnStream judges where progress for request r came: on r's own
// stream (or its resumption), or elsewhere (server.messages-on-own-stream).
func (v *Verifier) judgeOwnStream(x *exch, r *request, at time.Duration) {
	if r.lg == nil {
		v.excuse(cOwnStream, "the request's own stream had not started (an answer in a JSON body has none)")
		return
	}
	v.apply(cOwnStream)
	if x.srv == r.lg {
		return
	}
	where := "the standalone GET stream"
	if x.srv.kind != mcp.StreamGet {
		where = fmt.Sprintf("the stream of exchange %d", x.srv.origin)
	}
	ev := evidence(fmt.Sprintf("progress for request %s (%s) came on %s, not on the request's own stream", r.id, r.method, where), x.sess, x.num, at)
	ev.Related = related(r.exchange)
	v.find(cOwnStream, levelError, ev)
}

// judgeCancelled judges an error answering request r: when r's stream had
// been cut and the client never sent notifications/cancelled, an error that
// says the request was cancelled shows the server took the disconnection
// for a cancellation (server.disconnect-not-cancel).
func (v *Verifier) judgeCancelled(x *exch, r *request, e *observe.Event, at time.Duration) {
	if r.lg == nil || !r.lg.interrupted || r.cancelJudged {
		return
	}
	r.cancelJudged = true
	if r.cancelled {
		v.excuse(cDisconnectNotCancel, "the client cancelled the request")
		return
	}
	v.apply(cDisconnectNotCancel)
	code, message := errorOf(e.Data)
	if code != -32800 && !strings.Contains(strings.ToLower(message), "cancel") {
		return
	}
	ev := evidence(fmt.Sprintf("request %s (%s) was answered with error %d %q after its stream was cut; the client had not cancelled it", r.id, r.method, code, message), x.sess, x.num, at)
	ev.Related = related(r.exchange)
	ev.Fault = r.lg.endFault
	v.find(cDisconnectNotCancel, levelError, ev)
}

// errorOf reads the code and message of a JSON-RPC error response.
func errorOf(data []byte) (int, string) {
	m := jsonrpc.Scan(data)
	code, _ := strconv.Atoi(string(jsonrpc.Lookup(m.Error, "code")))
	var message string
	_ = json.Unmarshal(jsonrpc.Lookup(m.Error, "message"), &message)
	return code, message
}
