package verify

import (
	"fmt"
	"slices"
	"time"

	"github.com/frayproxy/fray/proxy/checks"
)

// A client that comes back for a stream with a Last-Event-ID that stream
// never delivered (one of another stream, of another session) came back:
// the GET is the reconnection of the stream that waits for one, judged by
// client.last-event-id, and what that stream failed to deliver cites it.

// misplacedResume judges a GET that came back for p, the stream waiting
// for its reconnection, with a Last-Event-ID p never delivered (where
// says what it was): the client came back, with the wrong id
// (client.last-event-id). It returns p.
func (v *Verifier) misplacedResume(x *exch, p *logical, where string) *logical {
	v.attempt(p, x)
	if x.leidByFray {
		p.blocked = "Last-Event-ID changed by fray"
	}
	v.apply(cLastEventID)
	msg := fmt.Sprintf("the client came back for the stream of exchange %d with Last-Event-ID %q, which that stream never delivered (%s); the last id delivered on it was %q", p.origin, x.clientLEID, where, p.lastID)
	ev := evidence(msg, x.sess, x.num, x.at)
	ev.EventIDs = []string{x.clientLEID, string(p.lastID)}
	ev.Related = related(p.origin, p.endEx)
	ev.Fault = p.endFault
	v.find(cLastEventID, levelError, ev)
	p.blamed = checks.ClientLastEventID
	return p
}

// owedAt returns the oldest POST stream of s that waits for the client's
// reconnection and had ended by at, nil when none does.
func (s *session) owedAt(at time.Duration) *logical {
	if p := s.oldestPending(); p != nil && at >= p.since {
		return p
	}
	return nil
}

// on reports whether the id was delivered on l.
func (rec deliveredRec) on(l *logical) bool {
	return rec.lg == l || slices.Contains(rec.also, l)
}
