package verify

import (
	"fmt"
	"iter"
	"math"
	"time"

	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// serverID judges an event id the upstream sent (server.event-ids-unique,
// and on a resumption the replay checks) and records it; ih is its
// idHash. It reports whether the event is a replay of an event sent
// before, and the id's entry in the session's book (-1 for none).
func (v *Verifier) serverID(x *exch, e *observe.Event, ih uint64, at time.Duration) (replay bool, entry int32) {
	s, id := x.sess, e.ID
	h := eventHash(e)
	rec, where, known := s.ids.lookUp(id, ih)
	if r := x.resume; r != nil {
		switch {
		case known && rec.hash == h && rec.lg == x.srv:
			v.judgeReplayed(x, string(id), rec, at)
			return true, where.ent
		case known && rec.lg != x.srv && rec.hash != h && s.reusedIDs && v.failsAtError(checks.ServerEventIDsUnique):
			// A server that numbers each stream alike sends, under an id
			// another stream used, this stream's own event: the reused id
			// is the one failure (judged below), not a leak.
			v.excuse(cReplayIsolated, "explained by "+checks.ServerEventIDsUnique)
		case known && rec.lg != x.srv && !r.known && (rec.hash == h || r.inReplay):
			v.excuse(cReplayIsolated, "a replay from an id the server never sent")
			return true, where.ent
		case known && rec.lg != x.srv && (rec.hash == h || r.inReplay):
			// Another stream's event in the replay, as sent or written
			// anew (a priming event re-sent with data): one leak, judged
			// here only, and what it brings again is explained by it.
			v.apply(cReplayIsolated)
			v.findReplayed(cReplayIsolated, x, fmt.Sprintf("the resumption from %q replayed event %q, which belongs to another stream of the session", r.x, id), string(id), rec.exchange, at)
			return true, where.ent
		case !known && r.inReplay:
			other := v.otherSession(s, func(o *session) bool {
				rec, ok := o.ids.upstream(id, ih)
				return ok && rec.hash == h
			})
			if other != nil && r.known && other.ids.holdsUp(r.x) {
				// The other session was sent the id this resumption
				// started from, which this session's server sent too:
				// the server numbers events per session, as the text
				// allows (an id is unique within its session), and the
				// same event under the same id in another session may
				// be this session's own, sent while its client was
				// away. It is taken for this session's.
				v.excuse(cReplayIsolated, "ids are numbered per session: an event another session also had cannot be told from this session's own")
				break
			}
			if other != nil {
				v.apply(cReplayIsolated)
				v.findReplayed(cReplayIsolated, x, fmt.Sprintf("the resumption from %q replayed event %q, which belongs to session %d", r.x, id, other.seq), string(id), 0, at)
				return true, where.ent
			}
		}
	}
	if x.resumable {
		v.apply(cIDsUnique)
		if known {
			ev := evidence(fmt.Sprintf("event id %q was sent again with other data; it was first used on exchange %d", id, rec.exchange), s, x.num, at)
			if x.resume == nil {
				ev.Message = fmt.Sprintf("event id %q was used again on a new stream; it was first used on exchange %d", id, rec.exchange)
			}
			ev.EventIDs = []string{string(id)}
			ev.Related = related(rec.exchange)
			v.find(cIDsUnique, levelError, ev)
			s.reusedIDs = true
		}
	}
	return false, v.recordID(s, x.srv, id, ih, h, where, e.Dispatched, at, x.num)
}

// judgeReplayed judges one event replayed on its own logical stream
// (server.replay-no-duplicates).
func (v *Verifier) judgeReplayed(x *exch, id string, rec idRec, at time.Duration) {
	r := x.resume
	v.apply(cReplayNoDup)
	var msg string
	switch {
	case r.known && rec.pos <= r.pos:
		msg = fmt.Sprintf("the resumption from %q replayed event %q, which the server sent at or before it", r.x, id)
	case r.replayed[id]:
		msg = fmt.Sprintf("the resumption from %q replayed event %q twice", r.x, id)
	default:
		r.replayed[id] = true
		r.top = max(r.top, rec.pos)
		return
	}
	v.findReplayed(cReplayNoDup, x, msg, id, rec.exchange, at)
}

// findReplayed records a finding of replay check c on the resumption x,
// which replayed event id (first sent on exchange first, 0 when unknown),
// and blames c for what x brings again.
func (v *Verifier) findReplayed(c checkID, x *exch, msg, id string, first uint64, at time.Duration) {
	ev := evidence(msg, x.sess, x.num, at)
	ev.EventIDs = []string{x.resume.x, id}
	ev.Related = related(first)
	ev.Fault = firstFault(x.reqFault, x.srv.endFault)
	v.find(c, levelError, ev)
	x.blamedDup = catalog[c].ID
}

// otherSession is the session other than s, the first in order of
// appearance, for which has is true; nil when none is. It looks through
// every live session, which only an id the session s never had asks for
// (a replay, a Last-Event-ID), so that recording an id, once per event,
// indexes nothing across sessions.
func (v *Verifier) otherSession(s *session, has func(o *session) bool) *session {
	var found *session
	for _, o := range v.sessions {
		if o != s && (found == nil || o.seq <= found.seq) && has(o) {
			found = o
		}
	}
	return found
}

// recordID enters an id the upstream sent (k its idHash, where its place
// in the session's book as lookUp returned it) and returns its entry.
// Once the windows are full it allocates nothing: each id takes the
// storage of one evicted.
func (v *Verifier) recordID(s *session, l *logical, id []byte, k, h uint64, where idSpot, dispatched bool, at time.Duration, ex uint64) int32 {
	rec := idRec{lg: l, pos: l.nextPos, hash: h, exchange: ex}
	l.nextPos++
	l.addEvent(id, rec.pos, dispatched, at)
	return s.ids.setUp(where, id, k, rec)
}

// judgeReplay judges whether a resumption replayed everything the server
// had sent after the id it resumed from (server.replay-complete).
func (v *Verifier) judgeReplay(x *exch, at time.Duration) {
	v.judgeReplayBelow(x, at, math.MaxInt64)
}

// judgeCutReplay judges the replay of a resumption that ended before the
// replay did (the client left, the upstream broke off, or a fault cut
// it): what the server had not replayed yet may still have been coming,
// but an event it passed over to replay a later one was left out
// (server.replay-complete). It reports whether it judged: when nothing
// was passed over, the check is excused.
func (v *Verifier) judgeCutReplay(x *exch, at time.Duration) bool {
	r := x.resume
	if r.top < 0 || !v.replaySkipped(x) {
		return false
	}
	v.judgeReplayBelow(x, at, r.top)
	return true
}

// replaySkipped reports whether the server had sent, before the
// resumption, an event between Last-Event-ID and the last event replayed
// that the replay left out.
func (v *Verifier) replaySkipped(x *exch) bool {
	if !x.resume.known || x.srv == nil {
		return false
	}
	for range notReplayed(x, x.resume.top) {
		return true
	}
	return false
}

// notReplayed yields the ids of the events, oldest first, that the server
// had sent on the stream x resumes, before x and after its Last-Event-ID
// and before position below, and that the replay has not brought.
func notReplayed(x *exch, below int64) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		r, l := x.resume, x.srv
		n := len(l.events)
		for i := range n {
			slot := (l.evNext + i) % n
			e, pos := &l.events[slot], l.eventPos(slot)
			id := l.eventID(e)
			if pos > r.pos && pos < below && e.dispatched() && e.at() < x.at && !r.replayed[string(id)] && !yield(id) {
				return
			}
		}
	}
}

// judgeReplayBelow is judgeReplay counting only the events before position
// below on the stream.
func (v *Verifier) judgeReplayBelow(x *exch, at time.Duration, below int64) {
	r := x.resume
	if r.judged {
		return
	}
	r.judged = true
	switch {
	case !mcp.Resumable(x.protocol):
		v.excuse(cReplayComplete, "protocol without resumability")
		return
	case !r.known && x.leidByFray:
		v.excuse(cReplayComplete, "Last-Event-ID rewritten by fray")
		return
	case !r.known && x.cli != nil && x.cli.blocked != "":
		v.excuse(cReplayComplete, x.cli.blocked)
		return
	case !r.known && (x.sess.ids.up.dropped > 0 || x.sess.partial):
		v.excuse(cReplayComplete, "Last-Event-ID older than the ledger's window, or never sent")
		return
	case !r.known:
		v.excuse(cReplayComplete, "Last-Event-ID the server never sent")
		return
	}
	l := x.srv
	if l.evFolded && len(l.events) > 0 && l.eventPos(l.evNext) > r.pos+1 {
		v.excuse(cReplayComplete, "a replay reaching back beyond the ledger's window")
		return
	}
	v.apply(cReplayComplete)
	var missing []string
	count := 0
	for id := range notReplayed(x, below) {
		count++
		if len(missing) < 10 {
			missing = append(missing, string(id))
		}
	}
	if count == 0 {
		return
	}
	ev := evidence(fmt.Sprintf("the resumption from %q did not replay %d event(s) the server had sent after it on that stream", r.x, count), x.sess, x.num, at)
	ev.EventIDs = missing
	ev.Related = related(l.origin, l.endEx)
	ev.Fault = l.endFault
	v.find(cReplayComplete, levelError, ev)
	l.blamed = checks.ServerReplayComplete
}
