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

// resumePatience is how long a resumed stream must have stayed open, the
// client waiting, before its silence is held against the server.
const resumePatience = time.Second

// A resumed stream (a GET the upstream answered as a resumption of a
// stream whose request was still pending) is judged once, when it ends
// or, still open, when a run whose client exited or cancelled ends. A
// server that accepted the resumption goes on to the response, and one
// whose resumed stream sent not a single JSON-RPC message before the
// client left it, or before the client cancelled the request it carried
// (notifications/cancelled), left the request unanswered
// (server.resume-continues). A cancellation that follows a silence is the
// client giving up on it, a consequence and not an excuse: the silence is
// judged as of the cancellation, and what the server does after it (ends
// the stream, answers the cancelled request) does not undo it. A stream
// the server ended itself before either is a poll: the next resumption
// is judged in turn. Silence fray may have caused (a stall, a delay or a
// buffer fault on the stream, whose held events are reported only once
// they go, or a fault that cut it) is never the server's.

// cancelSeen is a notifications/cancelled the client sent while a resumed
// stream of the request was open, and what the stream had brought by then.
type cancelSeen struct {
	at     time.Duration
	ex     uint64
	req    *request
	msgs   int // JSON-RPC messages the upstream had sent on the stream
	blocks int // blocks of any kind
}

// judgeResumeStalled judges a resumed stream as it ends.
func (v *Verifier) judgeResumeStalled(x *exch, end *observe.End, at time.Duration) {
	r := x.resume
	switch {
	case r == nil || r.silenceJudged:
		return
	case r.cancel != nil:
		v.judgeSilence(x, r.cancel.at)
		return
	case !v.silenceOwed(x), end.Cause == observe.Complete || end.Cause == observe.UpstreamFailed:
		return
	case end.Cause.ByFault():
		r.silenceJudged = true
		v.excuse(cResumeContinues, "the resumed stream was cut by fray")
		return
	}
	v.judgeSilence(x, at)
}

// cancelled records the client's notifications/cancelled for q, sent on
// exchange c: an open resumed stream that carries q is judged as of now
// when it ends.
func (v *Verifier) cancelled(q *request, c *exch) {
	if q.lg == nil {
		return
	}
	q.lg.cancelled++
	for _, x := range v.openResumptions(c.sess) {
		if (x.srv == q.lg || x.cli == q.lg) && x.resume.cancel == nil && v.silenceOwed(x) {
			x.resume.cancel = &cancelSeen{at: c.at, ex: c.num, req: q, msgs: x.upMsgs, blocks: x.events}
		}
	}
}

// silentAtEnd judges the resumed streams still open when the run ends:
// those the client cancelled a request of, and, when the client exited,
// every one it waited on until it left.
func (v *Verifier) silentAtEnd(at time.Duration) {
	for _, s := range v.sessions {
		for _, x := range v.openResumptions(s) {
			switch r := x.resume; {
			case r.silenceJudged:
			case r.cancel != nil:
				v.judgeSilence(x, r.cancel.at)
			case v.clientExited && v.silenceOwed(x):
				v.judgeSilence(x, at)
			}
		}
	}
}

// silenceOwed reports whether x is a resumed stream whose server still
// owes the response to a request it carries.
func (v *Verifier) silenceOwed(x *exch) bool {
	l := x.srv
	return l != nil && l.kind == mcp.StreamPost && l.reqs > 0
}

// judgeSilence judges the resumed stream x as of at: when the client left
// it, the run ended, or the client cancelled (x.resume.cancel).
func (v *Verifier) judgeSilence(x *exch, at time.Duration) {
	r, l := x.resume, x.srv
	r.silenceJudged = true
	c := r.cancel
	msgs, blocks := x.upMsgs, x.events
	if c != nil {
		msgs, blocks = c.msgs, c.blocks
	}
	switch {
	case !mcp.Resumable(x.protocol):
		return
	case r.held:
		v.excuse(cResumeContinues, "fray held the resumed stream back (a stall, delay or buffer fault): its silence may be fray's")
		return
	}
	v.apply(cResumeContinues)
	if msgs > 0 {
		return
	}
	open := at - r.since
	switch {
	case open < resumePatience && c != nil:
		v.excuse(cResumeContinues, "the client cancelled the request within a second of resuming")
		return
	case open < resumePatience:
		v.excuse(cResumeContinues, "the client left the resumed stream within a second")
		return
	}
	what := fmt.Sprintf("request %s still had no response when the client left", pendingOn(x.sess, l))
	if c != nil {
		what = fmt.Sprintf("request %s (%s) still had no response when the client, having waited in vain, cancelled it (notifications/cancelled on exchange %d)", c.req.id, c.req.method, c.ex)
	}
	msg := fmt.Sprintf("the server accepted the resumption from %q, then sent no JSON-RPC message on it for %s: %s", r.x, open.Round(time.Millisecond), what)
	if blocks > 0 {
		msg += fmt.Sprintf(" (only %d comment or priming block(s) came)", blocks)
	}
	ev := evidence(msg, x.sess, x.num, at)
	ev.EventIDs = []string{r.x}
	ev.Related = related(l.origin, l.endEx)
	if c != nil {
		ev.Related = related(l.origin, l.endEx, c.ex)
	}
	ev.Fault = l.endFault
	v.find(cResumeContinues, levelError, ev)
	l.blamed = checks.ServerResumeContinues
	if c != nil && !r.judged {
		// The stream may have ended cleanly after the cancellation, which
		// would judge its replay: what the silence left out of it is the
		// same failure.
		r.judged = true
		v.excuse(cReplayComplete, "explained by "+checks.ServerResumeContinues)
	}
}

// pendingOn lists, sorted, up to three requests of s still pending on l.
func pendingOn(s *session, l *logical) string {
	var pending []string
	for _, r := range s.pending {
		if r.lg == l && len(pending) < 3 {
			pending = append(pending, fmt.Sprintf("%s (%s)", r.id, r.method))
		}
	}
	slices.Sort(pending)
	return strings.Join(pending, ", ")
}

// cancelledAll reports whether the client cancelled every request l
// still owes a response to.
func (l *logical) cancelledAll() bool {
	return l.reqs > 0 && l.cancelled >= l.reqs
}
