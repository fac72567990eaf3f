package verify

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// onRequest opens an exchange: its requests enter the ledger, and the
// session id it carries is judged against what the client was told.
func (v *Verifier) onRequest(o *observe.Observation) {
	q := o.Request
	x := &exch{
		num:           o.Exchange,
		at:            o.At,
		method:        q.Method,
		path:          q.Path,
		stream:        o.Stream,
		protocol:      o.Protocol,
		clientSession: q.Header.Get(mcp.HeaderSession),
		clientHasLEID: q.HasLastEventID,
		acceptsSSE:    strings.Contains(q.Header.Get("Accept"), "text/event-stream"),
		clientLEID:    q.LastEventID,
		fwdHasLEID:    q.HasLastEventID,
		fwdLEID:       q.LastEventID,
		reqFault:      faultWith(o.Fired, anyTrait),
		resumable:     mcp.Resumable(o.Protocol),
		stateless:     mcp.Stateless(o.Protocol),
	}
	a := &q.Action
	x.answeredByFray = a.Answered || a.Dropped
	for _, h := range a.StrippedHeaders {
		if strings.EqualFold(h, mcp.HeaderSession) {
			x.sessionStripped = true
		}
	}
	if a.LastEventIDChanged {
		x.leidByFray = true
		x.fwdHasLEID, x.fwdLEID = a.HasForwardedLastEventID, a.ForwardedLastEventID
	}
	if x.clientHasLEID {
		v.totals.Resumptions++
	}
	s := v.sessionFor(o.Session, o.SessionSeq, o.At)
	if o.Stream == mcp.StreamLegacy {
		s.legacy = true
	}
	if o.Protocol != "" {
		s.protocol = o.Protocol
	}
	x.sess = s
	s.open++
	v.exch[x.num] = x
	v.deadSessionUsed(x, o)
	for _, m := range q.Messages {
		if m.Kind != mcp.RPCRequest {
			continue
		}
		if m.Method == "initialize" {
			x.isInit = true
		}
		if x.answeredByFray {
			v.excuse(cAnswered, "answered by fray (status or drop-request fault)")
			continue
		}
		v.forwarded++
		x.reqs = append(x.reqs, v.addRequest(s, m, x))
	}
	for _, id := range q.Cancels {
		if r := s.pending[id]; r != nil && !r.cancelled {
			r.cancelled = true
			v.cancelled(r, x)
		}
	}
	if x.isInit {
		v.initialized(o.At)
	}
	if q.Method == http.MethodDelete && x.clientSession != "" && s.key == x.clientSession && s.deleteAt == 0 {
		s.deleteAt = o.At
		v.judgeDeleteAfterGet(x, o.At)
	}
	if q.Method == http.MethodGet && len(v.legacy) > 0 {
		v.legacyAttempt(x)
	}
	v.statelessRequest(x, o)
}

// addRequest enters one forwarded request in the session's ledger.
func (v *Verifier) addRequest(s *session, m observe.Message, x *exch) *request {
	if r := s.pending[m.ID]; r != nil {
		// The same id forwarded again (a client retrying): it may be
		// answered once more.
		r.forwarded++
		r.exchange, r.at = x.num, x.at
		return r
	}
	r := &request{id: m.ID, method: m.Method, exchange: x.num, at: x.at, forwarded: 1, token: m.ProgressToken}
	if len(s.pending) >= maxPending {
		v.excuse(cAnswered, pendingFull)
		return r
	}
	s.pend(r)
	return r
}

// deadSessionUsed judges a request that carries a session id the client
// was told is gone (client.new-session-after-404).
func (v *Verifier) deadSessionUsed(x *exch, o *observe.Observation) {
	if x.clientSession == "" || x.stream == mcp.StreamLegacy {
		return
	}
	m := v.lookupMeta(x.clientSession)
	if m == nil || !m.dead || x.at <= m.deadAt {
		return
	}
	if x.method == http.MethodDelete {
		v.excuse(cNewSession, "a DELETE of the dead session")
		return
	}
	v.apply(cNewSession)
	ev := evidence(fmt.Sprintf("%s %s carried the session id answered 404 %v earlier", x.method, x.path, (x.at-m.deadAt).Round(time.Millisecond)), nil, x.num, x.at)
	ev.Session = m.seq
	ev.Related = related(m.deadEx)
	ev.Fault = x.reqFault
	v.find(cNewSession, levelError, ev)
}

// initialized settles the new sessions owed after 404s that came before at.
func (v *Verifier) initialized(at time.Duration) {
	kept := v.reinit[:0]
	for _, d := range v.reinit {
		if d.at < at {
			v.apply(cNewSession)
			v.cov.NewSessions++
			continue
		}
		kept = append(kept, d)
	}
	v.reinit = kept
}

// settleReinit judges the new sessions owed that are past due.
func (v *Verifier) settleReinit(at time.Duration, final bool) {
	kept := v.reinit[:0]
	for _, d := range v.reinit {
		due := v.dueAt(d.at, final)
		switch {
		case at >= due:
			v.apply(cNewSession)
			ev := evidence(fmt.Sprintf("no initialize followed the 404 for the session within %v", (due-d.at).Round(time.Millisecond)), nil, d.ex, d.at)
			ev.Session = d.seq
			ev.Fault = d.fault
			v.find(cNewSession, levelError, ev)
		case final:
			v.excuse(cNewSession, "the run ended soon after the 404")
		default:
			kept = append(kept, d)
		}
	}
	v.reinit = kept
}
