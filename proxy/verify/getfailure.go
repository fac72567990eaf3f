package verify

import (
	"fmt"
	"net/http"
	"time"

	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
)

// getLeaveWindow is how soon after a failure of its standalone GET stream
// a client that leaves a pending call's stream is taken to have left it
// for that failure: a client that tears its connection down does so at
// once, and a wider window would take a call's own timeout for it.
const getLeaveWindow = 2 * time.Second

// getFailure is the last failure of a session's standalone GET stream: a
// GET for it (its open, or a reconnection) answered with an error status
// other than 404, which says the session is gone, or the stream ended by
// anyone but the client. The zero value is none.
type getFailure struct {
	at    time.Duration
	ex    uint64
	what  string // "was answered 405", "ended"
	fault *report.FaultRef
}

// standalone reports whether x is a GET for its session's standalone
// stream: a GET without Last-Event-ID, or a resumption of that stream.
func standalone(x *exch) bool {
	if x.method != http.MethodGet || x.stateless || x.sess == nil {
		return false
	}
	return x.stream == mcp.StreamGet || x.attemptOf != nil && x.attemptOf.kind == mcp.StreamGet
}

// noteGetRefused records x, answered with an error status, when it was a
// GET for the session's standalone stream, and as a failure of another
// exchange of the session otherwise.
func (v *Verifier) noteGetRefused(x *exch, at time.Duration) {
	if x.sess != nil && !standalone(x) {
		x.sess.callFailedAt = at
	}
	if !standalone(x) || x.status < 400 || x.status == http.StatusNotFound {
		return
	}
	v.getFailed(x.sess, getFailure{at: at, ex: x.num, what: fmt.Sprintf("was answered %d", x.status), fault: x.reqFault})
}

// noteGetEnded records the end of x when it was a standalone stream that
// the client did not end itself.
func (v *Verifier) noteGetEnded(x *exch, end *observe.End, at time.Duration) {
	if x.sess != nil && !standalone(x) && end.Cause != observe.ClientGone && end.Cause != observe.Complete {
		x.sess.callFailedAt = at
	}
	if !standalone(x) || end.Cause == observe.ClientGone || x.sess.ended != "" {
		return
	}
	v.getFailed(x.sess, getFailure{at: at, ex: x.num, what: "ended", fault: x.endFault})
}

// getFailed records a failure of s's standalone stream and applies
// client.survives-get-failure to every call s has in flight: the
// standalone stream is optional (the client MAY open it), and losing it
// must not take the calls with it.
func (v *Verifier) getFailed(s *session, g getFailure) {
	s.getFailed = g
	for _, l := range s.logicals {
		if inFlight(l) {
			v.apply(cSurvivesGetFailure)
		}
	}
}

// inFlight reports whether l is a POST stream whose requests the client
// still waits for and has not cancelled.
func inFlight(l *logical) bool {
	return l.kind == mcp.StreamPost && l.state != lgDone && l.reqs > l.cancelled
}

// judgeLeftAfterGet judges a POST stream of requests still in flight that
// the client left, x its exchange, ending at at: soon after its standalone
// stream failed, the client gave its calls up with it.
func (v *Verifier) judgeLeftAfterGet(x *exch, l *logical, end *observe.End, at time.Duration) {
	if end.Cause != observe.ClientGone || !x.sess.leftForGet(at) || !inFlight(l) {
		return
	}
	v.gaveUpCalls(x, at, fmt.Sprintf("left the answer stream of %d pending request(s) it had not cancelled", l.reqs-l.cancelled), l)
}

// judgeDeleteAfterGet judges x, the client's DELETE of its session at at:
// sent soon after its standalone stream failed while calls were in
// flight, it ends them with the session.
func (v *Verifier) judgeDeleteAfterGet(x *exch, at time.Duration) {
	s := x.sess
	if !s.leftForGet(at) {
		return
	}
	var ls []*logical
	n := 0
	for _, l := range s.logicals {
		if inFlight(l) {
			ls = append(ls, l)
			n += l.reqs - l.cancelled
		}
	}
	if n > 0 {
		v.gaveUpCalls(x, at, fmt.Sprintf("deleted its session with %d pending request(s) it had not cancelled", n), ls...)
	}
}

// leftForGet reports whether what s's client gave up at at may be
// taken for its answer to the last failure of its standalone stream: that
// failure came at most getLeaveWindow before, and no other exchange of the
// session failed since, which would be a reason of its own.
func (s *session) leftForGet(at time.Duration) bool {
	g := s.getFailed
	return g.at != 0 && at >= g.at && at-g.at <= getLeaveWindow && s.callFailedAt < g.at
}

// gaveUpCalls finds that the client gave up calls, ls their streams, at
// x, what saying how, soon after its standalone stream's last failure.
func (v *Verifier) gaveUpCalls(x *exch, at time.Duration, what string, ls ...*logical) {
	g := x.sess.getFailed
	when := (at - g.at).Round(time.Millisecond).String() + " after"
	if at-g.at < time.Millisecond {
		when = "at once after"
	}
	ev := evidence(fmt.Sprintf("%s %s its standalone GET stream (exchange %d) %s", what, when, g.ex, g.what), x.sess, x.num, at)
	ev.Related = related(g.ex)
	ev.Fault = g.fault
	v.find(cSurvivesGetFailure, levelError, ev)
	for _, l := range ls {
		if l.blamed == "" {
			l.blamed = checks.ClientSurvivesGetFailure
		}
	}
}
