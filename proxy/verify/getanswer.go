package verify

import (
	"fmt"
	"net/http"

	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// judgeGetAnswer judges the upstream's answer to a GET the server saw
// without Last-Event-ID (a standalone stream opened, or opened again): an
// SSE stream or 405 (server.get-stream-or-405). Other rules govern a GET
// without Mcp-Session-Id (a server that requires sessions SHOULD answer
// it 400), 404 (a session the server ended), 401 and 403 (authorization), 429 and the
// 5xx statuses (transient), so those are not judged here; nor is a GET
// whose Accept did not name text/event-stream, which a server may refuse,
// nor one whose headers a fault of fray's rewrote or stripped, nor a
// resumption whose Last-Event-ID fray removed, nor a GET sent while
// another standalone stream of the session was open.
func (v *Verifier) judgeGetAnswer(x *exch, o *observe.Observation) {
	r := o.Response
	if x.method != http.MethodGet || x.stream == mcp.StreamLegacy || x.stateless || x.fwdHasLEID ||
		r.Origin != observe.FromUpstream || !x.acceptsSSE || x.clientSession == "" || x.sessionStripped {
		return
	}
	switch {
	case r.Status == http.StatusNotFound || r.Status == http.StatusUnauthorized || r.Status == http.StatusForbidden ||
		r.Status == http.StatusTooManyRequests || r.Status >= 500:
		return
	case x.reqFault != nil && (x.reqFault.Kind == "rewrite-header" || x.reqFault.Kind == "strip-header"):
		v.excuse(cGetAnswer, "a fault changed the GET's headers")
		return
	case x.clientHasLEID:
		// The client resumed a stream; fray took its Last-Event-ID away,
		// and what the server answers a GET the client never sent says
		// nothing of it.
		v.excuse(cGetAnswer, "fray removed the GET's Last-Event-ID")
		return
	case v.otherStandalone(x):
		// Whether a server may refuse a second standalone stream while
		// one is open the text leaves open: a client MAY hold several
		// SSE streams, and some servers keep one GET stream a session.
		v.excuse(cGetAnswer, "another standalone stream of the session was open")
		return
	}
	v.apply(cGetAnswer)
	if (r.Status/100 == 2 && r.EventStream) || r.Status == http.StatusMethodNotAllowed {
		return
	}
	what := fmt.Sprintf("HTTP %d", r.Status)
	if r.Status/100 == 2 {
		what += " without Content-Type: text/event-stream"
	}
	msg := fmt.Sprintf("the server answered a GET without Last-Event-ID with %s, neither an SSE stream nor 405", what)
	ev := evidence(msg, x.sess, x.num, o.At)
	ev.Fault = x.reqFault
	v.find(cGetAnswer, levelError, ev)
}

// otherStandalone reports whether another GET of x's session that the
// server saw without Last-Event-ID is still in flight: a standalone
// stream open beside the one x asks for (its head may not be reported
// yet: a GET with no session is placed at its first event). Only refusals
// ask, so the walk over the exchanges in flight is rare.
func (v *Verifier) otherStandalone(x *exch) bool {
	for n, y := range v.exch {
		if n != x.num && y.sess == x.sess && y.method == http.MethodGet && !y.fwdHasLEID && y.stream != mcp.StreamLegacy {
			return true
		}
	}
	return false
}
