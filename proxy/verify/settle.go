package verify

import (
	"fmt"
	"slices"
	"time"

	"github.com/frayproxy/fray/checks"
	"github.com/frayproxy/fray/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// finishLogical folds a logical stream nothing more is owed on: each
// message it kept from the client is judged (e2e.no-message-lost), and
// only what the id windows point to stays.
func (v *Verifier) finishLogical(l *logical, at time.Duration) {
	if l.state == lgDone && l.kept == nil && l.events == nil {
		return
	}
	l.state = lgDone
	for _, k := range l.kept {
		v.judgeKept(k)
		if k.rpcID == "" {
			continue
		}
		if r := l.sess.pending[k.rpcID]; r != nil && r.lg == l {
			r.lost, r.lostReason = true, v.lossReason(k)
		}
	}
	l.kept, l.events = nil, nil
	s := l.sess
	s.logicals = slices.DeleteFunc(s.logicals, func(c *logical) bool { return c == l })
}

// judgeKept judges one message that never reached the client whole.
func (v *Verifier) judgeKept(k *kept) {
	if reason := v.lossReason(k); reason != "" {
		v.excuse(cNoLost, reason)
		return
	}
	v.apply(cNoLost)
	what := k.rpcKind.String()
	if k.rpcID != "" {
		what += " to request " + k.rpcID
	}
	ev := evidence(fmt.Sprintf("the %s the server sent (%s) never reached the client", what, k.fate), k.cli.sess, k.exchange, k.at)
	if k.id != "" {
		ev.EventIDs = []string{k.id}
	}
	ev.Related = related(k.cli.attempts...)
	ev.Fault = k.fault
	v.find(cNoLost, levelError, ev)
}

// lossReason says why no conforming pair could have recovered a message
// kept from the client, "" when one could have.
func (v *Verifier) lossReason(k *kept) string {
	c := k.cli
	switch {
	case c.kind == mcp.StreamLegacy || c.sess.legacy:
		return "legacy transport"
	case !mcp.Resumable(c.protocol):
		return "protocol without resumability"
	case k.corrupted:
		return "corrupted by fray"
	case k.fate == observe.Dropped && k.laterID:
		return "dropped mid-stream while later ids were delivered"
	case k.fate == observe.Dropped && !c.resumed:
		return "dropped with nothing to make the client resume"
	case k.fate == observe.Stalled:
		return "stalled for ever by fray"
	case k.fate == observe.Undelivered || c.clientClosed:
		return "the client closed the stream"
	case c.sess.ended != "":
		return c.sess.ended
	case !c.everID:
		return "no id delivered to resume from"
	case c.blocked != "":
		return c.blocked
	case c.gaveUp && c.failedByFray >= giveUpAfter:
		return "reconnection refused by fray"
	}
	return blame(k.srv, c)
}

// blame names the check that already held an end responsible for what a
// logical stream failed to deliver, as an excuse ("" when none did).
func blame(ls ...*logical) string {
	for _, l := range ls {
		switch {
		case l == nil:
		case l.blamed != "":
			return "explained by " + l.blamed
		case l.noPriming && !l.everID:
			return "explained by " + checks.ServerPrimingEvent
		}
	}
	return ""
}

// streamReason says why no conforming pair could have recovered what a
// POST stream still owed the client, "" when one could have.
func (v *Verifier) streamReason(l *logical) string {
	switch {
	case l.kind == mcp.StreamLegacy || l.sess.legacy:
		return "legacy transport"
	case !mcp.Resumable(l.protocol):
		return "protocol without resumability"
	case l.clientClosed:
		return "the client closed the stream"
	case l.blocked != "":
		return l.blocked
	case l.gaveUp && l.failedByFray >= giveUpAfter:
		return "reconnection refused by fray"
	case l.cutByFray && !l.everID:
		return "no id delivered to resume from"
	}
	return blame(l)
}

// settleRequest judges a request still unanswered (e2e.every-request-answered).
func (v *Verifier) settleRequest(s *session, r *request, at time.Duration) {
	if r.settled || r.delivered > 0 {
		delete(s.pending, r.id)
		return
	}
	r.settled = true
	delete(s.pending, r.id)
	s.answered.put(r.id, r)
	if reason := v.requestExcuse(s, r); reason != "" {
		v.excuse(cAnswered, reason)
		return
	}
	v.apply(cAnswered)
	ev := evidence(fmt.Sprintf("request %s (%s) got no response delivered to the client", r.id, r.method), s, r.exchange, r.at)
	if l := r.lg; l != nil {
		ev.Related = related(append([]uint64{l.endEx}, l.attempts...)...)
		ev.Fault = l.endFault
		if l.lastID != "" {
			ev.EventIDs = []string{l.lastID}
		}
	}
	v.find(cAnswered, levelError, ev)
}

// requestExcuse says why a request may stay unanswered, "" when it may not.
func (v *Verifier) requestExcuse(s *session, r *request) string {
	switch {
	case r.cancelled:
		return "cancelled by the client"
	case s.ended != "":
		return s.ended
	case r.gone:
		return "the client left the exchange before the answer"
	}
	if r.lost {
		return r.lostReason
	}
	l := r.lg
	if l == nil {
		return ""
	}
	for _, k := range l.kept {
		if k.rpcID == r.id {
			return v.lossReason(k)
		}
	}
	return v.streamReason(l)
}
