package verify

import (
	"fmt"
	"net/http"

	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// refusal is the first POST of a session the server refused: its
// exchange and status.
type refusal struct {
	ex     uint64
	status int
}

// judgeAfterRefusal follows the upstream's answers to a session's POSTs:
// the first one refused with a 4xx (other than 401, 403, 404 and 429,
// which speak of the client's rights, the session's end or its pace) is
// noted, and a later POST of the live session answered 5xx is a session
// that one refused message took down (server.session-survives-refusal).
// A POST a fault of fray's changed is not judged; the refused one may be
// fray's doing, which is the point: it is the message the server fails,
// not the session. A Streamable HTTP POST without Mcp-Session-Id belongs
// to no session yet, and is not followed.
func (v *Verifier) judgeAfterRefusal(x *exch, o *observe.Observation) {
	r, s := o.Response, x.sess
	if x.method != http.MethodPost || x.stateless || s == nil || s.ended != "" || r.Origin != observe.FromUpstream ||
		(x.clientSession == "" && x.stream != mcp.StreamLegacy) {
		return
	}
	switch st := r.Status; {
	case s.refused == nil:
		if st/100 == 4 && st != http.StatusUnauthorized && st != http.StatusForbidden &&
			st != http.StatusNotFound && st != http.StatusTooManyRequests {
			s.refused = &refusal{ex: x.num, status: st}
		}
	case x.reqFault != nil:
		v.excuse(cSurvivesRefusal, "a fault changed the POST")
	default:
		v.apply(cSurvivesRefusal)
		if st < 500 {
			return
		}
		msg := fmt.Sprintf("the server answered a POST of the session with %d after it refused exchange %d's POST with %d: one refused message took the session down", st, s.refused.ex, s.refused.status)
		ev := evidence(msg, s, x.num, o.At)
		ev.Related = related(s.refused.ex)
		v.find(cSurvivesRefusal, levelError, ev)
	}
}
