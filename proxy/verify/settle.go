package verify

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// finishLogical folds a logical stream nothing more is owed on: each
// message it kept from the client is judged (e2e.no-message-lost), and
// only what the id windows point to stays.
func (v *Verifier) finishLogical(l *logical, at time.Duration) {
	if l.state == lgDone && l.kept == nil && len(l.events) == 0 {
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
	l.kept = nil
	l.dropEvents()
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
	msg := fmt.Sprintf("the %s the server sent (%s) never reached the client", what, k.fate)
	if id := blamedOf(k.srv, k.cli); id != "" {
		msg += " (see " + id + ")"
	}
	ev := evidence(msg, k.cli.sess, k.exchange, k.at)
	if k.id != "" {
		ev.EventIDs = []string{k.id}
	}
	ev.Related = related(k.cli.attempts...)
	ev.Fault = k.fault
	v.find(cNoLost, levelError, ev)
}

// reasonClientClosed excuses a message the client never got because it
// closed the stream: a message, not a request, since a client that leaves
// before its answer has not been answered.
const reasonClientClosed = "the client closed the stream"

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
		return reasonClientClosed
	case c.sess.ended != "" && c.sess.endedByServer:
		return c.sess.ended
	case !c.everID:
		return "no id delivered to resume from"
	case c.blocked != "":
		return c.blocked
	case c.gaveUp && c.failedByFray >= giveUpAfter:
		return "reconnection refused by fray"
	}
	return v.blame(k.srv, c)
}

// blame names the check that already held an end responsible, at error
// severity, for what a logical stream failed to deliver, as an excuse:
// one cause fails one check. A check that only warned explains nothing:
// the end-to-end check then fails on its own ("" is returned).
func (v *Verifier) blame(ls ...*logical) string {
	for _, l := range ls {
		if l != nil && l.blamed != "" && v.failsAtError(l.blamed) {
			return "explained by " + l.blamed
		}
	}
	return ""
}

// blamedOf is the check that blamed an end for one of ls, "" when none
// did: cited by a consequence that a warning did not excuse.
func blamedOf(ls ...*logical) string {
	for _, l := range ls {
		if l != nil && l.blamed != "" {
			return l.blamed
		}
	}
	return ""
}

// failsAtError reports whether check id is of error severity.
func (v *Verifier) failsAtError(id string) bool {
	for i, c := range catalog {
		if c.ID == id {
			return v.checks[i].sev == checks.Error
		}
	}
	return false
}

// streamReason says why no conforming pair could have recovered what a
// POST stream still owed the client, "" when one could have.
func (v *Verifier) streamReason(l *logical) string {
	switch {
	case l.kind == mcp.StreamLegacy || l.sess.legacy:
		return "legacy transport"
	case mcp.Stateless(l.protocol):
		return statelessExcuse(l)
	case !mcp.Resumable(l.protocol):
		return "protocol without resumability"
	case l.blocked != "":
		return l.blocked
	case l.gaveUp && l.failedByFray >= giveUpAfter:
		return "reconnection refused by fray"
	case l.cutByFray && !l.everID:
		return "no id delivered to resume from"
	case !l.everID && l.idFault != nil:
		// The server ended the stream itself, but fray had kept back the
		// ids the client would have resumed with.
		return "no id delivered to resume from: fray kept the ids back (" + l.idFault.Kind + ")"
	}
	return v.blame(l)
}

// settleRequest judges a request still unanswered (e2e.every-request-answered).
func (v *Verifier) settleRequest(s *session, r *request, at time.Duration) {
	s.unpend(r)
	if r.settled || r.delivered > 0 {
		return
	}
	r.settled = true
	s.answered.put(r.id, r)
	if reason := v.requestExcuse(s, r); reason != "" {
		v.excuse(cAnswered, reason)
		return
	}
	if at-r.at < v.deadline && v.answerStreamOpen(s, r) {
		// The run ended (fray stopped) with the stream that would carry
		// the answer still open, before the answer was due: fray cannot
		// say it would not have come, nor that it came (the client may
		// have got it as fray stopped observing).
		v.excuse(cAnswered, "the run ended before its answer was due, its answer stream still open")
		return
	}
	v.apply(cAnswered)
	ev := evidence(fmt.Sprintf("request %s (%s) got no response delivered to the client: %s", r.id, r.method, v.whoKept(s, r)), s, r.exchange, r.at)
	if l := r.lg; l != nil {
		ev.Related = related(append([]uint64{l.endEx}, l.attempts...)...)
		ev.Fault = l.endFault
		if len(l.lastID) > 0 {
			ev.EventIDs = []string{string(l.lastID)}
		}
	}
	v.find(cAnswered, levelError, ev)
}

// whoKept says which end kept a request from its answer, from what fray
// saw of both.
func (v *Verifier) whoKept(s *session, r *request) string {
	l := r.lg
	sent := r.lost
	if l != nil {
		for _, k := range l.kept {
			sent = sent || k.rpcID == r.id
		}
	}
	server := "the server sent no response"
	if sent {
		server = "the server sent the response, but it did not reach the client"
	}
	var client []string
	if l != nil && l.blamed != "" {
		if says := blameSays[l.blamed]; says != "" {
			client = append(client, says)
		} else {
			client = append(client, "see "+l.blamed)
		}
	}
	switch {
	case l != nil && !sent && len(l.attempts) > 0:
		client = append(client, fmt.Sprintf("the client's last reconnection for it (exchange %d) brought no response", l.attempts[len(l.attempts)-1]))
	case l != nil && l.owed && len(l.attempts) == 0 && l.blamed == "":
		client = append(client, "the client did not reconnect for it")
	}
	switch {
	case s.ended != "" && !s.endedByServer:
		client = append(client, "the client "+s.ended)
	case l != nil && l.clientClosed:
		client = append(client, fmt.Sprintf("the client left the stream %s after the request", (l.closedAt-r.at).Round(time.Millisecond)))
	case r.gone:
		client = append(client, "the client left the exchange before the answer")
	}
	if len(client) == 0 {
		return server
	}
	return server + "; " + strings.Join(client, "; ")
}

// answerStreamOpen reports whether the stream that would carry r's answer
// is still open: its own exchange or stream, or on the legacy transport
// the session's SSE stream.
func (v *Verifier) answerStreamOpen(s *session, r *request) bool {
	if v.inFlight(r) {
		return true
	}
	if !s.legacy {
		return false
	}
	for _, x := range v.exch {
		if x.sess == s && x.stream == mcp.StreamLegacy && x.eventStream {
			return true
		}
	}
	return false
}

// requestExcuse says why a request may stay unanswered, "" when it may
// not: only what fray observed excuses it, and never the client giving up.
func (v *Verifier) requestExcuse(s *session, r *request) string {
	switch {
	case r.cancelled && r.lg != nil && r.lg.unrecoverable != "":
		return "cancelled by the client after a cut no conforming pair could recover (the report's coverage names it)"
	case r.cancelled:
		// A client that cancelled after an end failed it gave up on what
		// that failure kept from it: the excuse is the failure.
		if b := v.blame(r.lg); b != "" {
			return b
		}
		return reasonCancelled
	case s.ended != "" && s.endedByServer:
		return s.ended
	}
	if r.lost && r.lostReason != reasonClientClosed {
		return r.lostReason
	}
	l := r.lg
	if l == nil {
		return ""
	}
	if l.unread {
		return unreadAnswer
	}
	for _, k := range l.kept {
		if k.rpcID == r.id {
			if reason := v.lossReason(k); reason != reasonClientClosed {
				return reason
			}
		}
	}
	return v.streamReason(l)
}

// reasonCancelled excuses a request the client cancelled with
// notifications/cancelled, and what its stream then no longer owed.
const reasonCancelled = "cancelled by the client"

// blameSays is what a check that blamed a stream says of who kept its
// answer.
var blameSays = map[string]string{
	checks.ClientReconnects:       "the client did not reconnect for it (client.reconnects)",
	checks.ClientLastEventID:      "the client did not reconnect with the Last-Event-ID it held (client.last-event-id)",
	checks.ClientRetriesTransient: "the client gave up after one transient error (client.retries-transient)",
	checks.ServerResumeContinues:  "the resumed stream fell silent (server.resume-continues)",
	checks.ServerReplayComplete:   "the resumption did not replay it (server.replay-complete)",
}
