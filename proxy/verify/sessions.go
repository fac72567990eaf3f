package verify

import (
	"slices"
	"time"
)

// metaFor returns the metadata of session id, creating it.
func (v *Verifier) metaFor(id string, seq int) *sessionMeta {
	h := hashKey(id)
	if m, _ := v.meta.get(h); m != nil {
		if m.seq == 0 {
			m.seq = seq
		}
		return m
	}
	m := &sessionMeta{seq: seq}
	v.meta.put(h, m)
	v.totals.Sessions++
	return m
}

// lookupMeta returns the metadata of session id, nil when none is known.
func (v *Verifier) lookupMeta(id string) *sessionMeta {
	if id == "" {
		return nil
	}
	m, _ := v.meta.get(hashKey(id))
	return m
}

// sessionFor returns the ledger of session key, creating it, and marks it
// active at at.
func (v *Verifier) sessionFor(key string, seq int, at time.Duration) *session {
	s := v.sessions[key]
	if s == nil {
		if len(v.sessions) >= maxSessions {
			v.evictSession(at)
		}
		s = &session{
			key:      key,
			seq:      seq,
			ids:      newIDBook(idWindow),
			pending:  make(map[string]*request),
			tokens:   make(map[string]*request),
			answered: newWindow[string, *request](answeredWindow),
		}
		if key != "" {
			s.meta = v.metaFor(key, seq)
			s.partial = s.meta.dropped
		}
		v.sessions[key] = s
	}
	if s.seq == 0 {
		s.seq = seq
	}
	s.lastAt = max(s.lastAt, at)
	return s
}

// evictSession drops the least recently active session, settling it.
func (v *Verifier) evictSession(at time.Duration) {
	var oldest *session
	for _, s := range v.sessions {
		if oldest == nil || s.lastAt < oldest.lastAt {
			oldest = s
		}
	}
	if oldest != nil {
		v.dropSession(oldest, at, true)
	}
}

// sweep settles what is due as of at and drops idle sessions; with final,
// it settles and drops everything.
func (v *Verifier) sweep(at time.Duration, final bool) {
	if final {
		v.silentAtEnd(at)
	}
	for _, s := range v.sessions {
		v.settleDue(s, at, final)
		if final || s.open <= 0 && at-s.lastAt > v.deadline && !v.owes(s) {
			v.dropSession(s, at, final)
		}
	}
	v.settleLegacy(at, final)
	v.settleReinit(at, final)
	v.settleStateless(at, final)
	if final {
		clear(v.exch)
		v.dead = nil
	}
}

// owes reports whether a session still has a logical stream waiting for
// a reconnection.
func (v *Verifier) owes(s *session) bool {
	for _, l := range s.logicals {
		if l.state == lgPending {
			return true
		}
	}
	return false
}

// settleDue judges the obligations of s that are due at at.
func (v *Verifier) settleDue(s *session, at time.Duration, final bool) {
	for _, l := range slices.Clone(s.logicals) {
		if l.state != lgPending {
			continue
		}
		due := l.since + l.retry + v.deadline
		if final {
			due = l.since + 2*l.retry + finalGrace
		}
		switch {
		case at >= due, final && (v.clientExited || l.candidate != 0):
			// Due, or the client can no longer come back (it exited), or
			// it already came back, without the id.
			v.judgeGone(l, at)
		case final:
			v.excuse(cReconnects, "the run ended while the client waited to reconnect")
			v.finishLogical(l, at)
		}
	}
	if final || at-s.lastAt > v.deadline {
		for _, r := range s.pending {
			if final || !v.inFlight(r) {
				v.settleRequest(s, r, at)
			}
		}
	}
	if final {
		for _, l := range slices.Clone(s.logicals) {
			v.finishLogical(l, at)
		}
	}
}

// dropSession settles everything of s and forgets its ledger; its id's
// metadata stays.
func (v *Verifier) dropSession(s *session, at time.Duration, final bool) {
	v.replaysLeft(s, at)
	for _, l := range slices.Clone(s.logicals) {
		if l.state == lgPending && !final {
			v.judgeGone(l, at)
		}
	}
	for _, r := range s.pending {
		v.settleRequest(s, r, at)
	}
	for _, l := range slices.Clone(s.logicals) {
		v.finishLogical(l, at)
	}
	if s.meta != nil {
		s.meta.dropped = true
	}
	for n, x := range v.exch {
		if x.sess == s {
			if x.eventStream && x.responded {
				v.noteResumed(x, x.cli, nil)
			}
			delete(v.exch, n)
		}
	}
	v.dead = slices.DeleteFunc(v.dead, func(d *session) bool { return d == s })
	delete(v.sessions, s.key)
}

// endSession marks s as ended, for reason. When the server or the
// transport ended it (byServer: a 404, a lost legacy stream), what it
// still owed is excused with reason. When the client ended it (a DELETE,
// closing its legacy stream), its requests still pending were never
// answered and are judged so, and a reconnection it owed and never made
// is held against it: a client that gives up is not excused by what it
// did next.
func (v *Verifier) endSession(s *session, reason string, byServer bool, at time.Duration) {
	if s.ended != "" {
		return
	}
	s.ended, s.endedByServer = reason, byServer
	// The streams first: what a check blames on them is what the
	// unanswered requests' and lost messages' findings cite.
	v.replaysPassedOver(s, at)
	for _, l := range slices.Clone(s.logicals) {
		switch {
		case l.state != lgPending:
			v.finishLogical(l, at)
		case byServer:
			v.excuse(cReconnects, reason)
			v.finishLogical(l, at)
		default:
			v.judgeGone(l, at)
		}
	}
	for _, r := range s.pending {
		v.settleRequest(s, r, at)
	}
}

// inFlight reports whether a request's exchange or answer stream is still
// open: a server may work long without a word, and the client waits.
func (v *Verifier) inFlight(r *request) bool {
	if _, ok := v.exch[r.exchange]; ok {
		return true
	}
	return r.lg != nil && r.lg.streams > 0
}

// pend enters r among the session's pending requests.
func (s *session) pend(r *request) {
	s.pending[r.id] = r
	if r.token != "" {
		s.tokens[r.token] = r
	}
}

// unpend takes r out of the session's pending requests.
func (s *session) unpend(r *request) {
	if s.pending[r.id] == r {
		delete(s.pending, r.id)
	}
	if r.token != "" && s.tokens[r.token] == r {
		delete(s.tokens, r.token)
	}
}
