package verify

import (
	"fmt"

	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/mcp"
)

// resumesFinished judges a GET whose Last-Event-ID was delivered on a
// POST answer stream that had already delivered its response and ended:
// nothing of that stream is left to resume, so the client meant another
// stream (its standalone GET stream, say) and sent an id that is not that
// stream's (client.last-event-id). It reports whether it judged.
func (v *Verifier) resumesFinished(l *logical, x *exch) bool {
	if l.kind != mcp.StreamPost || l.state != lgDone || l.reqs > 0 {
		return false
	}
	v.apply(cLastEventID)
	msg := fmt.Sprintf("GET carried Last-Event-ID %q, delivered on the answer stream of exchange %d, which had already delivered its response and ended: nothing of it is left to resume", x.clientLEID, l.origin)
	ev := evidence(msg, x.sess, x.num, x.at)
	ev.EventIDs = []string{x.clientLEID}
	ev.Related = related(l.origin, l.endEx)
	v.find(cLastEventID, levelError, ev)
	l.blamed = checks.ClientLastEventID
	return true
}
