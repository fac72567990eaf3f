package verify

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// onEnd closes an exchange: the answers in a JSON body count, and a
// stream's end decides what the server and the client owe next.
func (v *Verifier) onEnd(o *observe.Observation) {
	x := v.exch[o.Exchange]
	if x == nil {
		return
	}
	delete(v.exch, x.num)
	s := x.sess
	s.open--
	defer v.statelessEnd(x, o.End, o.At)
	s.lastAt = max(s.lastAt, o.At)
	end := o.End
	switch {
	case !x.responded:
		v.endUnanswered(x, end, o.At)
	case !x.eventStream:
		v.endBody(x, end, o)
	default:
		v.endStream(x, end, o.At)
	}
}

// endUnanswered closes an exchange that got no answer: the client left
// (or was left hanging by a drop-request fault).
func (v *Verifier) endUnanswered(x *exch, end *observe.End, at time.Duration) {
	if end.Cause == observe.ClientGone {
		for _, q := range x.reqs {
			q.gone = true
		}
	}
	if x.answeredByFray {
		v.noteRefused(x) // a drop-request fault swallowed it
	}
	if l := cmp.Or(x.legacyOf, x.attemptOf); l != nil {
		v.attemptFailed(l, x, at)
	}
}

// endBody closes an exchange answered with a body that is not a stream.
func (v *Verifier) endBody(x *exch, end *observe.End, o *observe.Observation) {
	s := x.sess
	if x.origin == observe.FromUpstream {
		isMCP, what := bodyAnswer(x.status, len(end.Messages))
		v.upstreamAnswered(x, isMCP, what)
	}
	if x.isInit && o.Protocol != "" {
		s.protocol = o.Protocol
	}
	for _, m := range end.Messages {
		if m.Kind.Answers() {
			v.apply(cNoLost)
			v.deliverResponse(s, m.ID, x, 1, o.At)
		}
	}
	for _, q := range x.reqs {
		if q.delivered > 0 || q.settled {
			continue
		}
		switch {
		case end.Unread && x.status < 400:
			q.settled = true
			s.unpend(q)
			v.excuse(cAnswered, unreadAnswer)
		case x.status >= 400:
			q.settled = true
			s.unpend(q)
			v.excuse(cAnswered, "answered with an HTTP error status")
		case end.Cause == observe.ClientGone:
			q.gone = true
		}
	}
	if x.method == http.MethodDelete && x.origin == observe.FromUpstream && x.status/100 == 2 && x.clientSession != "" {
		m := v.metaFor(x.clientSession, s.seq)
		m.deleted, m.deletedAt = true, o.At
		if s.key == x.clientSession {
			v.replaysLeft(s, o.At)
			v.endSession(s, "deleted the session", false, o.At)
			v.dropSession(s, o.At, false)
		}
	}
	if x.status >= 400 {
		v.noteRefused(x)
		v.noteGetRefused(x, o.At)
		if x.stream == mcp.StreamGet {
			v.cov.StandaloneRefused++
		}
	}
	// A body is no stream: an attempt it answered failed.
	if l := cmp.Or(x.legacyOf, x.attemptOf); l != nil {
		v.attemptFailed(l, x, o.At)
	}
}

// endStream closes an SSE stream.
func (v *Verifier) endStream(x *exch, end *observe.End, at time.Duration) {
	s := x.sess
	if !x.primingDone {
		x.primingDone = true
		if end.Cause == observe.Complete {
			v.judgePriming(x, nil, at)
		} else if c, ok := primingCheck(x); ok && c == cPriming {
			v.excuse(c, "the stream ended before its first event, not by the server")
		}
	}
	v.judgePrimingGet(x, end, at)
	v.judgeResumeStalled(x, end, at)
	v.judgeInferredGap(x, at)
	if r := x.resume; r != nil && !r.judged {
		switch {
		case end.Cause == observe.Complete:
			v.judgeReplay(x, at)
		case end.Cause == observe.ClientGone && v.replayLeft(x, at):
		case v.judgeCutReplay(x, at):
		default:
			r.judged = true
			v.excuse(cReplayComplete, "the resumption was cut before its replay ended")
		}
	}
	if x.method == http.MethodGet && !x.fwdHasLEID && x.stream != mcp.StreamLegacy {
		s.openGets--
	}
	v.judgeRetryBeforeClose(x, end, at)
	if lg := x.legacyOf; lg != nil && lg.state != lgDone {
		// A GET that reconnected a legacy client: a new stream settles
		// it, anything else is a failed attempt.
		if x.status == http.StatusOK {
			lg.state = lgDone
		} else {
			v.attemptFailed(lg, x, at)
		}
	}
	l := x.cli
	l.streams--
	l.unread = l.unread || end.Unread
	if l.kind == mcp.StreamLegacy {
		v.legacyEnded(l, x, end, at)
		return
	}
	if end.Cause.ByFault() {
		l.cutByFray = true
	}
	v.noteResumed(x, l, end)
	noteAttemptEnd(x, l)
	v.noteGetEnded(x, end, at)
	if l.streams > 0 || l.state == lgDone {
		return
	}
	l.endEx, l.endFault = x.num, firstFault(x.endFault, l.endFault)
	l.lastResume = x.clientHasLEID || x.attemptOf == l
	if x.attemptOf == l && (end.Cause == observe.FaultReset || end.Cause == observe.UpstreamFailed) {
		// A reconnection broken off: a transient failure of the attempt.
		l.failed++
		l.transient, l.lastFail = true, x.num
		l.failWhat = fmt.Sprintf("%s on exchange %d", end.Cause, x.num)
	}
	if l.reqs > 0 {
		l.interrupted = true
	}
	v.noteStreamEnd(x, l, end, at)
	switch {
	case end.Cause == observe.ClientGone:
		v.judgeLeftAfterGet(x, l, end, at)
		l.clientClosed, l.closedAt = true, at
		v.finishLogical(l, at)
	case l.kind == mcp.StreamPost && (l.reqs == 0 || l.cancelledAll()):
		v.finishLogical(l, at)
	default:
		l.state, l.since = lgPending, at
		if l.kind == mcp.StreamPost {
			v.owe(l)
		}
	}
}

// owe decides whether the client owes a reconnection for a POST stream
// that ended before its response (client.reconnects).
func (v *Verifier) owe(l *logical) {
	l.owed = false
	switch {
	case l.sess.ended != "":
		v.excuse(cReconnects, l.sess.ended)
	case !mcp.Resumable(l.protocol):
		v.excuse(cReconnects, "protocol without resumability")
	case l.idUncertain:
		v.excuse(cReconnects, "a block passed through unparsed: the id the client holds is unknown")
	case !l.hasID && l.idFault != nil:
		v.excuse(cReconnects, "no id delivered to resume from: fray kept the ids back ("+l.idFault.Kind+")")
	case !l.hasID:
		v.excuse(cReconnects, "no id delivered to resume from")
	default:
		l.owed = true
	}
}

// judgeRetryBeforeClose judges a server that ended a POST stream before
// its response (server.retry-before-close).
func (v *Verifier) judgeRetryBeforeClose(x *exch, end *observe.End, at time.Duration) {
	l := x.srv
	if end.Cause != observe.Complete || l == nil || l.kind != mcp.StreamPost || l.respSent {
		return
	}
	if !mcp.Primes(x.protocol) {
		return
	}
	if x.sess.deleteAt > 0 && at >= x.sess.deleteAt {
		v.excuse(cRetryBeforeClose, "ended after the client's DELETE of the session")
		return
	}
	if l.cancelledAll() {
		v.excuse(cRetryBeforeClose, "ended after the client cancelled its request: no response was owed")
		return
	}
	v.apply(cRetryBeforeClose)
	if x.sawRetry {
		return
	}
	ev := evidence("the server ended the stream before the response without sending retry on it", x.sess, x.num, at)
	ev.Related = related(l.origin)
	v.find(cRetryBeforeClose, levelError, ev)
}

// judgeGone judges a logical stream whose reconnection fell due with the
// client still away, or that the client can no longer come back for (it
// exited, or deleted its session), then folds it:
//
//   - a GET without Last-Event-ID that came after the stream ended was
//     the client's reconnection, whatever the server answered it
//     (client.last-event-id);
//   - a client whose one reconnection attempt met a transient error (a
//     5xx, a 429, a reset) and that never tried again gave the stream up
//     (client.retries-transient), for the standalone stream as for a POST's;
//   - a client that made two failed attempts in a row has spent the
//     smallest retry budget of the official SDKs, and is excused;
//   - a client that owed a POST stream's reconnection and never came back
//     did not poll (client.reconnects).
func (v *Verifier) judgeGone(l *logical, at time.Duration) {
	why := fmt.Sprintf("within %v after the stream ended before its response", (at - l.since).Round(time.Millisecond))
	switch {
	case l.sess.ended != "" && !l.sess.endedByServer:
		why = "before it " + l.sess.ended
	case v.clientExited:
		why = "before it exited"
	}
	owed := l.kind == mcp.StreamPost && l.owed && l.reqs > 0
	switch {
	case owed && l.candidate != 0:
		v.apply(cReconnects)
		v.findNoLastEventID(l, "came back", l.candidate, l.candidateAt)
	case owed && l.blamed == checks.ClientLastEventID:
		// It came back, with an id the stream never delivered, and got
		// nothing to resume: the wrong id is the cause, already found.
		v.excuse(cReconnects, "the client came back, with the wrong Last-Event-ID (client.last-event-id)")
	case l.failed == 1 && l.transient && (owed || l.kind != mcp.StreamPost):
		v.apply(cRetriesTransient)
		ev := evidence(fmt.Sprintf("after its reconnection met a transient error (%s), the client never tried again %s", l.failWhat, why), l.sess, l.lastFail, l.since)
		ev.Related = related(append([]uint64{l.origin}, l.attempts...)...)
		ev.Fault = l.endFault
		if len(l.lastID) > 0 {
			ev.EventIDs = []string{string(l.lastID)}
		}
		v.find(cRetriesTransient, levelError, ev)
		l.blamed = checks.ClientRetriesTransient
	case owed && l.blamed == checks.ServerReplayComplete:
		// It came back, and the server's replay left out what it owed:
		// a client that stops asking again is not the cause.
		v.excuse(cReconnects, "the client came back, and the server's replay was incomplete (server.replay-complete)")
	case owed && l.failed >= giveUpAfter:
		l.gaveUp = true
		v.excuse(cReconnects, "the client gave up after two failed attempts")
	case owed:
		v.apply(cReconnects)
		msg := fmt.Sprintf("the client did not come back %s, holding id %q", why, l.lastID)
		if l.lastFail != 0 {
			msg = fmt.Sprintf("the client's reconnection failed (%s), and it did not come back again %s, holding id %q", l.failWhat, why, l.lastID)
		}
		ev := evidence(msg, l.sess, l.endEx, l.since)
		ev.EventIDs = []string{string(l.lastID)}
		ev.Related = related(append([]uint64{l.origin}, l.attempts...)...)
		ev.Fault = l.endFault
		v.find(cReconnects, levelError, ev)
		l.blamed = checks.ClientReconnects
	}
	l.owed = false
	v.finishLogical(l, at)
}

// replayLeft judges the replay of a resumption of the standalone GET
// stream that the client leaves (its stream, or its session) a second or
// more after it began with no new event since: what the server had stored
// is not coming, and no later event would end the replay as a POST
// stream's response does (server.replay-complete). It reports whether it
// judged.
func (v *Verifier) replayLeft(x *exch, at time.Duration) bool {
	r := x.resume
	if r == nil || r.judged || x.srv == nil || x.srv.kind != mcp.StreamGet || at-x.at < resumePatience {
		return false
	}
	v.judgeReplay(x, at)
	return true
}

// replaysLeft applies replayLeft to the open resumptions of s, which the
// client leaves with its session, in the order they began.
func (v *Verifier) replaysLeft(s *session, at time.Duration) {
	for _, x := range v.openResumptions(s) {
		v.replayLeft(x, at)
	}
}

// replaysPassedOver applies judgeCutReplay to the open resumptions of s,
// in the order they began: a session that ends while a replay is still
// open may already show an event the replay passed over, and the streams'
// losses are judged next, citing it.
func (v *Verifier) replaysPassedOver(s *session, at time.Duration) {
	for _, x := range v.openResumptions(s) {
		if !x.resume.judged {
			v.judgeCutReplay(x, at)
		}
	}
}

// openResumptions lists the exchanges of s that are resumptions, in the
// order they began.
func (v *Verifier) openResumptions(s *session) []*exch {
	var open []*exch
	for _, x := range v.exch {
		if x.sess == s && x.resume != nil {
			open = append(open, x)
		}
	}
	slices.SortFunc(open, func(a, b *exch) int { return cmp.Compare(a.num, b.num) })
	return open
}
