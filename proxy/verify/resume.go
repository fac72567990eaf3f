package verify

import (
	"fmt"
	"net/http"
	"time"

	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// The client's timing bounds.
const (
	// retryTolerance is how much sooner than retry a client may come back.
	retryTolerance = 50 * time.Millisecond
	// stormGap and stormCount: stormCount consecutive reconnection
	// attempts for one stream, each begun less than stormGap after the
	// previous failure, are a storm (client.backoff).
	stormGap   = 100 * time.Millisecond
	stormCount = 3
	// giveUpAfter is how many failed attempts in a row a client may make
	// before it gives up on a stream without blame: the smallest retry
	// budget of the official SDKs.
	giveUpAfter = 2
)

// getAnswered places an answered GET: a legacy stream, a resumption, a
// reconnection without Last-Event-ID, or a standalone stream, in the
// client's view (by the Last-Event-ID it sent) and in the server's (by
// the one fray forwarded).
func (v *Verifier) getAnswered(x *exch) {
	s := x.sess
	if x.stream == mcp.StreamLegacy {
		if x.eventStream {
			l := v.newLogical(x, mcp.StreamLegacy)
			x.cli, x.srv = l, l
			if x.legacyOf != nil && x.status == http.StatusOK {
				x.legacyOf.state = lgDone
			}
		}
		return
	}
	var cli *logical
	if x.clientHasLEID {
		cli = v.resumeFor(x)
	} else {
		cli = v.plainGet(x)
	}
	if !x.eventStream {
		return
	}
	if cli == nil {
		cli = v.newLogical(x, mcp.StreamGet)
	}
	x.cli = cli
	if !x.fwdHasLEID {
		// A standalone stream to the server, whatever the client meant.
		s.openGets++
		x.srv = cli
		if cli.origin != x.num {
			x.srv = v.newLogical(x, mcp.StreamGet)
		}
		return
	}
	r := &resumeState{x: x.fwdLEID, inReplay: true, replayed: make(map[string]bool), top: -1}
	x.resume = r
	if rec, ok := s.ids.upstreamString(x.fwdLEID); ok {
		r.known, r.pos = true, rec.pos
		x.srv = rec.lg
		return
	}
	x.srv = cli
	if cli.origin != x.num {
		x.srv = v.newLogical(x, mcp.StreamResume)
	}
}

// resumeFor finds the logical stream a GET with Last-Event-ID resumes in
// the client's view, and judges the id it sent (client.last-event-id).
func (v *Verifier) resumeFor(x *exch) *logical {
	s, id := x.sess, x.clientLEID
	if d := v.deadOwner(id, s); d != nil {
		if p := s.owedAt(x.at); p != nil {
			return v.misplacedResume(x, p, fmt.Sprintf("it belongs to session %d, which was answered 404", d.seq))
		}
		v.apply(cNewSession)
		ev := evidence(fmt.Sprintf("GET carried Last-Event-ID %q from session %d, which was answered 404", id, d.seq), s, x.num, x.at)
		ev.EventIDs = []string{id}
		if d.meta != nil {
			ev.Related = related(d.meta.deadEx)
		}
		ev.Fault = x.reqFault
		v.find(cNewSession, levelError, ev)
		return nil
	}
	if rec, ok := s.ids.deliveredString(id); ok {
		l := rec.resumes(id)
		if p := s.owedAt(x.at); l.state == lgDone && p != nil && p != l {
			// Nothing is owed on the stream the id was delivered on: the
			// client came back for the one that waits.
			if !rec.on(p) {
				return v.misplacedResume(x, p, fmt.Sprintf("it was delivered on another stream of the session, exchange %d, which owed nothing more", l.origin))
			}
			l = p
		}
		v.attempt(l, x)
		v.judgeSentID(l, x)
		switch {
		case x.leidByFray:
			l.blocked = "Last-Event-ID changed by fray"
		case rec.rewritten:
			l.blocked = "resumed from an id fray rewrote"
		}
		return l
	}
	l := s.oldestPending()
	if s.partial || s.ids.down.dropped > 0 {
		v.excuse(cLastEventID, "an id older than the ledger's window")
	} else {
		v.apply(cLastEventID)
		msg := fmt.Sprintf("GET carried Last-Event-ID %q, which fray never delivered in this session", id)
		if o := v.otherSession(s, func(o *session) bool { _, ok := o.ids.deliveredString(id); return ok }); o != nil {
			msg = fmt.Sprintf("GET carried Last-Event-ID %q, which belongs to session %d: fray never delivered it in this one", id, o.seq)
		}
		ev := evidence(msg, s, x.num, x.at)
		ev.EventIDs = []string{id}
		if l != nil {
			ev.Message += fmt.Sprintf("; the last id delivered on exchange %d was %q", l.endEx, l.lastID)
			ev.Related = related(l.origin, l.endEx)
			ev.Fault = l.endFault
		}
		v.find(cLastEventID, levelError, ev)
		if l != nil {
			l.blamed = checks.ClientLastEventID
		}
	}
	if l != nil {
		v.attempt(l, x)
		if x.leidByFray {
			l.blocked = "Last-Event-ID changed by fray"
		}
	}
	return l
}

// judgeSentID compares the Last-Event-ID a client sent with the last id
// delivered on the stream it resumes.
func (v *Verifier) judgeSentID(l *logical, x *exch) {
	if l.idUncertain {
		v.excuse(cLastEventID, "a block passed through unparsed: the id the client holds is unknown")
		return
	}
	if v.resumesFinished(l, x) {
		return
	}
	v.apply(cLastEventID)
	if l.hasID && x.clientLEID == string(l.lastID) {
		return
	}
	msg := fmt.Sprintf("GET carried Last-Event-ID %q, but the last id delivered on that stream was %q", x.clientLEID, l.lastID)
	if !l.hasID {
		msg = fmt.Sprintf("GET carried Last-Event-ID %q, but an empty id had reset it on that stream", x.clientLEID)
	}
	ev := evidence(msg, x.sess, x.num, x.at)
	ev.EventIDs = []string{x.clientLEID, string(l.lastID)}
	ev.Related = related(l.origin, l.endEx)
	ev.Fault = firstFault(l.endFault, l.idFault)
	v.find(cLastEventID, levelError, ev)
	l.blamed = checks.ClientLastEventID
}

// plainGet places a GET without Last-Event-ID: the reconnection of a
// stream that ended before its response with an id delivered (a finding),
// or the standalone stream. A GET the client sent before that stream ended
// is no reconnection of it, though its answer may be observed after the
// end: the two come from goroutines of their own.
func (v *Verifier) plainGet(x *exch) *logical {
	s := x.sess
	l := s.oldestPending()
	if l == nil || l.path != x.path || x.at < l.since {
		return nil
	}
	if s.openGets == 0 && !l.lastResume {
		// May be the standalone stream's first open: decided when the
		// stream's reconnection falls due.
		if l.candidate == 0 {
			l.candidate, l.candidateAt = x.num, x.at
		}
		return nil
	}
	v.attempt(l, x)
	v.findNoLastEventID(l, "reconnected", x.num, x.at)
	return l
}

// findNoLastEventID finds that the client came back for l, on exchange ex
// at at, with a GET without the Last-Event-ID it had
// (client.last-event-id); what says how it came back.
func (v *Verifier) findNoLastEventID(l *logical, what string, ex uint64, at time.Duration) {
	v.apply(cLastEventID)
	ev := evidence(fmt.Sprintf("%s with a GET without Last-Event-ID although %q was delivered on that stream", what, l.lastID), l.sess, ex, at)
	ev.EventIDs = []string{string(l.lastID)}
	ev.Related = related(l.origin, l.endEx)
	ev.Fault = l.endFault
	v.find(cLastEventID, levelError, ev)
	l.blamed = checks.ClientLastEventID
}

// oldestPending returns the oldest POST stream that ended before its
// response while the client held an id for it.
func (s *session) oldestPending() *logical {
	for _, l := range s.logicals {
		if l.kind == mcp.StreamPost && l.state == lgPending && l.owed {
			return l
		}
	}
	return nil
}

// deadOwner returns the session, other than s, answered 404, in which id
// was delivered.
func (v *Verifier) deadOwner(id string, s *session) *session {
	for _, d := range v.dead {
		if d == s {
			continue
		}
		if _, ok := d.ids.deliveredString(id); ok {
			return d
		}
	}
	return nil
}

// attempt records x as a reconnection attempt for l and judges its timing
// (client.retry-honoured, client.backoff) and that it came
// (client.reconnects).
func (v *Verifier) attempt(l *logical, x *exch) {
	x.attemptOf = l
	if len(l.attempts) < 8 {
		l.attempts = append(l.attempts, x.num)
	}
	l.resumed = true
	if l.state != lgPending {
		return
	}
	wait := x.at - l.since
	v.judgeLoop(l, x, wait)
	if l.owed {
		v.apply(cReconnects)
		l.owed = false
	}
	v.judgeWait(l, x, wait)
	l.state = lgOpen
}

// judgeWait judges how long a client waited before an attempt.
func (v *Verifier) judgeWait(l *logical, x *exch, wait time.Duration) {
	if l.hasRetry && l.kind != mcp.StreamLegacy {
		if !mcp.Resumable(l.protocol) {
			return
		}
		v.apply(cRetryHonoured)
		// The text asks for a wait of at least retry; a client that waits
		// longer (its own backoff) breaks no rule.
		if wait >= l.retry-retryTolerance {
			return
		}
		ev := evidence(fmt.Sprintf("reconnected %v after the stream ended; retry was %v", wait.Round(time.Millisecond), l.retry), x.sess, x.num, x.at)
		ev.Related = related(l.origin, l.endEx)
		ev.Fault = firstFault(l.retryFault, l.endFault)
		if len(l.lastID) > 0 {
			ev.EventIDs = []string{string(l.lastID)}
		}
		v.find(cRetryHonoured, levelError, ev)
		return
	}
	v.apply(cBackoff)
	if wait >= stormGap {
		l.fast = 0
		return
	}
	l.fast++
	if l.fast < stormCount {
		return
	}
	l.fast = 0
	ev := evidence(fmt.Sprintf("%d reconnection attempts in a row, each less than %v after the previous failure, with no retry given", stormCount, stormGap), x.sess, x.num, x.at)
	ev.Related = related(append([]uint64{l.origin}, l.attempts...)...)
	ev.Fault = firstFault(l.endFault, x.reqFault)
	v.find(cBackoff, levelError, ev)
}

// attemptFailed records an attempt for l that got no stream: the client
// owes another, unless it has failed giveUpAfter times in a row.
func (v *Verifier) attemptFailed(l *logical, x *exch, at time.Duration) {
	if l.state == lgDone {
		return
	}
	l.state, l.since = lgPending, at
	if !x.responded {
		// The client left its own attempt.
		return
	}
	l.failed++
	l.lastFail = x.num
	l.transient = x.status >= 500 || x.status == http.StatusTooManyRequests
	l.failWhat = fmt.Sprintf("%d on exchange %d", x.status, x.num)
	if x.origin == observe.FromFault {
		l.failedByFray++
		l.endFault = firstFault(x.reqFault, l.endFault)
	}
	l.owed = l.kind == mcp.StreamPost && l.reqs > 0 && l.hasID && mcp.Resumable(l.protocol) ||
		l.kind == mcp.StreamLegacy
	if l.owed && refusesResumption(x) {
		l.owed = false
		v.excuse(cReconnects, "the server answered the resumption 405: it offers no stream to resume")
	}
}

// legacyAttempt records a GET on the SSE path of a legacy stream that
// ended with requests unanswered.
func (v *Verifier) legacyAttempt(x *exch) {
	for _, l := range v.legacy {
		if l.state == lgPending && l.path == x.path && x.at > l.since {
			x.legacyOf = l
			v.attempt(l, x)
			return
		}
	}
}

// legacyEnded records the end of a legacy stream: its session ends with
// it, and the client owes a new stream when requests were unanswered.
func (v *Verifier) legacyEnded(l *logical, x *exch, end *observe.End, at time.Duration) {
	s := l.sess
	if end.Cause == observe.ClientGone {
		v.endSession(s, "closed the legacy stream", false, at)
		return
	}
	if len(s.pending) > 0 {
		l.state, l.since, l.owed = lgPending, at, true
		l.endEx, l.endFault = x.num, x.endFault
		if len(v.legacy) >= maxLogicals {
			v.legacy = v.legacy[1:]
		}
		v.legacy = append(v.legacy, l)
	}
	v.endSession(s, "legacy stream lost: the session ended with it", true, at)
}

// settleLegacy judges legacy clients that owed a new stream.
func (v *Verifier) settleLegacy(at time.Duration, final bool) {
	kept := v.legacy[:0]
	for _, l := range v.legacy {
		if l.state == lgDone {
			continue
		}
		due := v.dueAt(l.since, final)
		switch {
		case l.state != lgPending:
			if !final {
				kept = append(kept, l)
			}
		case at >= due, final && v.clientExited:
			v.judgeLegacyGone(l, min(at, due))
		case final:
			v.excuse(cReconnects, "the run ended while the client waited to reconnect")
		default:
			kept = append(kept, l)
		}
	}
	v.legacy = kept
}

func (v *Verifier) judgeLegacyGone(l *logical, due time.Duration) {
	if !l.owed {
		return
	}
	if l.failed >= giveUpAfter {
		v.excuse(cReconnects, "the client gave up after two failed attempts")
		return
	}
	v.apply(cReconnects)
	ev := evidence(fmt.Sprintf("no new GET on %s within %v after the legacy stream ended with requests unanswered", l.path, (due-l.since).Round(time.Millisecond)), l.sess, l.endEx, l.since)
	ev.Related = related(l.attempts...)
	ev.Fault = l.endFault
	v.find(cReconnects, levelError, ev)
}

// resumes picks, among the streams id was delivered on, the one a client
// resuming from id means: the one whose last delivered id it is, waiting
// for its reconnection if several are; else the first it was delivered on.
func (rec deliveredRec) resumes(id string) *logical {
	var best *logical
	for _, l := range append([]*logical{rec.lg}, rec.also...) {
		if l.state == lgDone || !l.hasID || string(l.lastID) != id {
			continue
		}
		if best == nil || l.state == lgPending && best.state != lgPending {
			best = l
		}
	}
	if best == nil {
		return rec.lg
	}
	return best
}
