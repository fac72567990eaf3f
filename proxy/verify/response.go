package verify

import (
	"fmt"
	"net/http"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// onResponse records the answer an exchange got: the session it learned
// or was told is gone, and, for a stream, the logical stream it belongs
// to in the client's view and in the server's.
func (v *Verifier) onResponse(o *observe.Observation) {
	x := v.exch[o.Exchange]
	if x == nil || x.responded {
		return
	}
	r := o.Response
	x.responded, x.status, x.origin, x.eventStream = true, r.Status, r.Origin, r.EventStream
	if r.Origin == observe.FromUpstream {
		v.fromUpstream++
		switch {
		case r.EventStream && r.Status/100 == 2:
			v.upstreamAnswered(x, true, "")
		case r.EventStream:
			v.upstreamAnswered(x, false, fmt.Sprintf("%d with an event stream", r.Status))
		}
	} else {
		v.fromFray++
	}
	if o.Stream == mcp.StreamLegacy {
		x.stream = mcp.StreamLegacy
	}
	v.learnSession(x, o)
	if x.stream == mcp.StreamLegacy {
		x.sess.legacy = true
	}
	v.judgeUnknownSession(x, o)
	if r.Origin == observe.FromUpstream {
		if r.Session != "" && r.Session != x.clientSession {
			v.metaFor(r.Session, o.SessionSeq).issued = true
		}
		if x.clientSession == "" && o.Session != "" {
			// Learned from the upstream's answer, even when a strip-header
			// fault kept it from the client.
			v.metaFor(o.Session, o.SessionSeq).issued = true
		}
	}
	if r.Status == http.StatusNotFound && x.clientSession != "" && x.stream != mcp.StreamLegacy &&
		x.method != http.MethodDelete && r.Origin != observe.FromFray {
		v.sessionGone(x, o)
	}
	if f := faultWith(unarmed(o.Fired), faults.EndsStream); f != nil {
		x.endFault = f
	}
	v.statelessResponse(x, o)
	v.judgeGetAnswer(x, o)
	v.judgeAfterRefusal(x, o)
	switch {
	case x.method == http.MethodGet:
		v.getAnswered(x)
		if x.resume != nil {
			x.resume.since = o.At
		}
	case r.EventStream && x.method == http.MethodPost:
		l := v.newLogical(x, mcp.StreamPost)
		for _, q := range x.reqs {
			if q.delivered == 0 && !q.settled {
				q.lg = l
				l.reqs++
				if q.cancelled {
					l.cancelled++
				}
			}
		}
		x.cli, x.srv = l, l
	}
	if r.EventStream {
		v.totals.Streams++
		if x.cli == nil {
			x.cli = v.newLogical(x, x.stream)
		}
		if x.srv == nil {
			x.srv = x.cli
		}
		x.cli.streams++
		x.cli.state = lgOpen
		if x.attemptOf == x.cli && r.Status/100 == 2 {
			x.cli.failed = 0
		}
	}
}

// learnSession moves an exchange into the session its answer named (the
// initialize answer, a legacy stream's endpoint).
func (v *Verifier) learnSession(x *exch, o *observe.Observation) {
	if o.Session == "" || o.Session == x.sess.key {
		return
	}
	old := x.sess
	s := v.sessionFor(o.Session, o.SessionSeq, o.At)
	old.open--
	s.open++
	for _, q := range x.reqs {
		if old.pending[q.id] == q {
			old.unpend(q)
			s.pend(q)
		}
	}
	x.sess = s
}

// judgeUnknownSession judges the upstream's answer to a request that
// carried a session id it never issued, or deleted
// (server.unknown-session-404).
func (v *Verifier) judgeUnknownSession(x *exch, o *observe.Observation) {
	if x.clientSession == "" || x.stream == mcp.StreamLegacy || o.Response.Origin != observe.FromUpstream {
		return
	}
	if x.sessionStripped {
		v.excuse(cUnknownSession, "Mcp-Session-Id removed by a strip-header fault")
		return
	}
	if !mcp.Sessions(x.protocol) {
		return
	}
	m := v.lookupMeta(x.clientSession)
	var why string
	switch {
	case m != nil && m.deleted && x.at > m.deletedAt:
		why = "deleted"
	case m == nil || !m.issued:
		if v.meta.dropped > 0 {
			v.excuse(cUnknownSession, "more session ids than the ledger remembers")
			return
		}
		why = "never issued"
	default:
		return
	}
	v.apply(cUnknownSession)
	if o.Response.Status == http.StatusNotFound {
		return
	}
	ev := evidence(fmt.Sprintf("%s %s with a session id the server %s was answered %d, not 404", x.method, x.path, why, o.Response.Status), x.sess, x.num, o.At)
	if m != nil {
		ev.Session = m.seq
	}
	// The published text asks for 404 after the server ended a session;
	// for an id it never issued it says nothing, and 404 is only what
	// clients expect.
	lvl := levelError
	if why == "never issued" {
		lvl = levelWarning
	}
	v.find(cUnknownSession, lvl, ev)
}

// sessionGone records a 404 to a request that carried its session: the
// client owes a new session, and what the session owed is excused.
func (v *Verifier) sessionGone(x *exch, o *observe.Observation) {
	m := v.metaFor(x.clientSession, o.SessionSeq)
	if !m.dead {
		m.dead, m.deadAt, m.deadEx = true, o.At, x.num
		v.cov.SessionsLost++
		v.reinit = append(v.reinit, reinitDue{seq: m.seq, at: o.At, ex: x.num, fault: faultWith(o.Fired, faults.AnswersRequests)})
	}
	s := x.sess
	if s.key != x.clientSession {
		return
	}
	v.endSession(s, "the session was answered 404", true, o.At)
	if len(v.dead) >= 16 {
		v.dead = v.dead[1:]
	}
	v.dead = append(v.dead, s)
}

// newLogical starts a logical stream at x.
func (v *Verifier) newLogical(x *exch, kind mcp.StreamType) *logical {
	s := x.sess
	l := &logical{origin: x.num, kind: kind, sess: s, protocol: x.protocol, state: lgOpen, path: x.path}
	if kind == mcp.StreamLegacy {
		return l
	}
	if len(s.logicals) >= maxLogicals {
		victim := s.logicals[0]
		for _, c := range s.logicals {
			if c.streams == 0 {
				victim = c
				break
			}
		}
		if victim.state == lgPending {
			v.judgeGone(victim, x.at)
		}
		v.finishLogical(victim, x.at)
	}
	s.logicals = append(s.logicals, l)
	return l
}
