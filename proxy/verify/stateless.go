package verify

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
)

// MCP 2026-07-28 has no sessions and no resumption: a stream that breaks
// before its response loses the request, which the client re-issues with
// a new id; closing a stream cancels its request, after which the server
// sends nothing more for it; subscriptions/listen streams replace the
// standalone GET stream and begin with an acknowledgement; routing headers
// mirror the body. The revision is a request's own (mcp.RequestRevision),
// so one run may mix both eras: these checks judge only requests of
// 2026-07-28 or later, and the older checks excuse them.

// The bounds of the stateless ledger.
const (
	// maxCancelled bounds the cancelled requests watched for later
	// messages; the oldest is forgotten first.
	maxCancelled = 4096
	// maxOwed bounds the re-issues and listens owed at once.
	maxOwed = 4096
	// fastReissue is how soon after its cut a re-issue counts as
	// immediate; three in a row for one call are a storm (client.backoff).
	fastReissue = 100 * time.Millisecond
	stormAfter  = 3
)

// stateless is the ledger of the 2026-07-28 checks. The zero value is
// empty and ready.
type stateless struct {
	// exch holds what these checks follow of each exchange in flight.
	exch map[uint64]*slExch
	// owed are calls whose stream broke, waiting to be re-issued, and
	// listens owed after a subscription stream was lost, oldest first.
	owed []*owedCall
	// cancelled maps the ids of requests whose stream closed before
	// their response to what is known of them; byToken their progress
	// tokens. order bounds both.
	cancelled map[string]*cancelRec
	byToken   map[string]*cancelRec
	order     []*cancelRec
	// fast follows, per call (method and params), the re-issues in a row
	// that came sooner than fastReissue after the break without waiting
	// longer each time.
	fast map[callKey]fastRun
	// tasks are the tasks the client was told to poll, by id; taskOrder
	// bounds them (stateless_tasks.go).
	tasks     map[string]*taskRec
	taskOrder []string
}

// callKey names a call for matching its re-issue.
type callKey struct {
	method string
	params uint64
}

// fastRun is a run of immediate re-issues of one call: how many, and the
// wait before the last.
type fastRun struct {
	n    int
	wait time.Duration
	at   time.Duration // when the last re-issue came
}

// slExch is one exchange of 2026-07-28 as these checks follow it.
type slExch struct {
	method, name, id, token string
	params                  uint64 // digest of the params, for a re-issue
	listen                  bool
	ackJudged               bool
	// mismatch says how the headers the server got disagree with the
	// body, "" when they agree.
	mismatch string
	fault    *report.FaultRef
}

// owedCall is a call the client owes again: a re-issue, or a listen.
type owedCall struct {
	listen       bool
	method, name string
	params       uint64
	id           string
	at           time.Duration
	ex           uint64
	fault        *report.FaultRef
	what         string // how the stream ended, for evidence
}

// check is the check that judges whether d came again.
func (d *owedCall) check() checkID {
	if d.listen {
		return cListensAgain
	}
	return cReissue
}

// cancelRec is a request whose stream closed before its response: the
// server owes nothing more for it.
type cancelRec struct {
	id, token string
	method    string
	at        time.Duration
	ex        uint64
	fault     *report.FaultRef
	found     bool
}

// sl returns the stateless ledger, making it on first use.
func (v *Verifier) sl() *stateless {
	if v.stateless == nil {
		v.stateless = &stateless{
			exch:      make(map[uint64]*slExch),
			cancelled: make(map[string]*cancelRec),
			byToken:   make(map[string]*cancelRec),
			fast:      make(map[callKey]fastRun),
		}
	}
	return v.stateless
}

// statelessRequest follows a request of 2026-07-28: its routing headers,
// what the server got of them, and whether it is a call or a listen the
// client owed.
func (v *Verifier) statelessRequest(x *exch, o *observe.Observation) {
	q := o.Request
	if q.Method != http.MethodPost || len(q.Messages) == 0 || !mcp.Stateless(x.protocol) {
		return
	}
	m := q.Messages[0]
	if m.Kind != mcp.RPCRequest {
		return
	}
	st := v.sl()
	sx := &slExch{method: m.Method, name: m.Name, id: m.ID, token: m.ProgressToken, params: m.Params, listen: m.Method == mcp.MethodListen}
	st.exch[x.num] = sx
	v.judgeRouting(x, q, m)
	v.judgeTaskPoll(x, m)
	if !x.answeredByFray {
		sx.mismatch = routingMismatch(forwardedHeader(q), m)
		sx.fault = faultWith(o.Fired, faults.StripsHeaders)
	}
	if c := st.cancelled[m.ID]; c != nil {
		// The client used a cancelled request's id again: what the server
		// sends with that id may answer the new request.
		v.forgetCancelled(c)
	}
	if c := st.byToken[m.ProgressToken]; c != nil && m.ProgressToken != "" {
		// Likewise its progress token: progress under it may be the new
		// request's.
		delete(st.byToken, m.ProgressToken)
	}
	v.judgeReissue(x, q, sx)
	if sx.listen {
		// A subscription stream answers its request only when it ends:
		// the request owes no response while the stream lasts.
		for _, r := range x.reqs {
			if !r.settled {
				r.settled = true
				x.sess.unpend(r)
				v.excuse(cAnswered, "a subscriptions/listen stream owes no response while it lasts")
			}
		}
	}
}

// forwardedHeader is the request header as fray forwarded it: the
// client's, less the headers a fault stripped, with those it set.
func forwardedHeader(q *observe.Request) http.Header {
	a := &q.Action
	if len(a.StrippedHeaders) == 0 && len(a.SetHeaders) == 0 {
		return q.Header
	}
	h := q.Header.Clone()
	for _, name := range a.StrippedHeaders {
		h.Del(name)
	}
	for _, s := range a.SetHeaders {
		h.Set(s.Name, s.Value)
	}
	return h
}

// routingMismatch is what h's routing headers say that m's body does not,
// "" when they agree. Of a message whose name is unknown it compares the
// method alone.
func routingMismatch(h http.Header, m observe.Message) string {
	name, hasName := m.Name, m.HasName
	if m.NameUnknown {
		name, hasName = "", false
		if vals := h[mcp.HeaderName]; len(vals) > 0 {
			if got, ok := mcp.DecodeHeaderValue(vals[0]); ok {
				name, hasName = got, true
			}
		}
	}
	return mcp.RoutingMismatch(h, m.Method, name, hasName)
}

// judgeRouting judges the routing headers the client sent, before any
// fault (client.routing-headers).
func (v *Verifier) judgeRouting(x *exch, q *observe.Request, m observe.Message) {
	v.apply(cRoutingHeaders)
	bad := routingMismatch(q.Header, m)
	if bad == "" {
		return
	}
	v.find(cRoutingHeaders, levelError, evidence(fmt.Sprintf("request %s (%s) was sent with %s", m.ID, m.Method, bad), x.sess, x.num, x.at))
}

// judgeReissue matches a request to the call or listen the client owed
// (client.reissues-cut-request, client.listens-again, client.backoff).
func (v *Verifier) judgeReissue(x *exch, q *observe.Request, sx *slExch) {
	st := v.sl()
	for i, d := range st.owed {
		if d.listen != sx.listen || !d.listen && (d.method != sx.method || d.params != sx.params) {
			continue
		}
		st.owed = append(st.owed[:i], st.owed[i+1:]...)
		if d.listen {
			v.apply(cListensAgain)
			return
		}
		v.apply(cReissue)
		v.cov.Reissues++
		if sx.id == d.id {
			ev := evidence(fmt.Sprintf("the client re-issued request %s (%s) %v after its stream broke with the same id; a re-issue takes a new id", d.id, d.method, (x.at-d.at).Round(time.Millisecond)), x.sess, x.num, x.at)
			ev.Related = related(d.ex)
			ev.Fault = d.fault
			v.find(cReissue, levelError, ev)
		} else if carried := resumeHeaders(q); carried != "" {
			ev := evidence(fmt.Sprintf("the client re-issued request %s (%s) as %s with %s, which 2026-07-28 removed", d.id, d.method, sx.id, carried), x.sess, x.num, x.at)
			ev.Related = related(d.ex)
			v.find(cReissue, levelWarning, ev)
		}
		v.judgeReissueBackoff(x, d)
		return
	}
}

// resumeHeaders names the headers of the stateful era a request carries.
func resumeHeaders(q *observe.Request) string {
	var out []string
	if q.HasLastEventID {
		out = append(out, "Last-Event-ID")
	}
	if q.Header.Get(mcp.HeaderSession) != "" {
		out = append(out, "Mcp-Session-Id")
	}
	return strings.Join(out, " and ")
}

// judgeReissueBackoff counts re-issues that came at once after their
// break: three in a row for one call, each sooner than fastReissue and
// none waiting clearly longer than the one before (half as long again,
// plus 5ms for the timers), are a storm (client.backoff). A backoff that
// grows, 20ms then 40ms then 80ms, is none.
func (v *Verifier) judgeReissueBackoff(x *exch, d *owedCall) {
	st := v.sl()
	k := callKey{d.method, d.params}
	v.apply(cBackoff)
	wait := x.at - d.at
	run, ok := st.fast[k]
	switch {
	case wait >= fastReissue:
		delete(st.fast, k)
		return
	case ok && wait >= run.wait*3/2+5*time.Millisecond:
		run = fastRun{n: 1, wait: wait, at: x.at}
	default:
		run = fastRun{n: run.n + 1, wait: wait, at: x.at}
	}
	st.fast[k] = run
	if run.n < stormAfter {
		return
	}
	delete(st.fast, k)
	ev := evidence(fmt.Sprintf("the client re-issued %s %d times in a row, each less than %v after the stream broke and without waiting longer each time", d.method, stormAfter, fastReissue), x.sess, x.num, x.at)
	ev.Related = related(d.ex)
	ev.Fault = d.fault
	v.find(cBackoff, levelError, ev)
}

// owe records a call or listen the client owes after a stream broke.
func (v *Verifier) oweCall(d *owedCall) {
	st := v.sl()
	if len(st.owed) >= maxOwed {
		v.excuse(d.check(), owedFull)
		return
	}
	st.owed = append(st.owed, d)
}

// settleStateless judges the re-issues and listens past due as of at:
// AnswerDeadline after the break, or with final one second after it (at
// once when the client has exited). Cancelled requests older than the
// deadline are no longer watched.
func (v *Verifier) settleStateless(at time.Duration, final bool) {
	st := v.stateless
	if st == nil {
		return
	}
	kept := st.owed[:0]
	for _, d := range st.owed {
		c := d.check()
		due := v.dueAt(d.at, final)
		switch {
		case at >= due || final && v.clientExited:
			v.apply(c)
			v.find(c, levelError, v.owedEvidence(d, at))
		case final:
			v.excuse(c, "the run ended soon after the stream broke")
		default:
			kept = append(kept, d)
		}
	}
	clear(st.owed[len(kept):])
	st.owed = kept
	for len(st.order) > 0 && (final || at-st.order[0].at > v.deadline) {
		v.forgetCancelled(st.order[0])
	}
	for k, run := range st.fast {
		// A run that went quiet is over: its call was answered.
		if at-run.at > v.deadline {
			delete(st.fast, k)
		}
	}
	if final {
		clear(st.exch)
		clear(st.fast)
		clear(st.tasks)
		st.taskOrder = nil
	}
}

// owedEvidence describes a call or listen the client never sent again.
func (v *Verifier) owedEvidence(d *owedCall, at time.Duration) report.Evidence {
	msg := fmt.Sprintf("the client did not re-issue request %s (%s) in the %v after its stream %s", d.id, d.method, (at - d.at).Round(time.Millisecond), d.what)
	if v.clientExited && !d.listen {
		msg = fmt.Sprintf("the client did not re-issue request %s (%s) after its stream %s; it exited without it", d.id, d.method, d.what)
	}
	if d.listen {
		msg = fmt.Sprintf("the client did not listen again in the %v after its subscriptions/listen stream (request %s) %s", (at - d.at).Round(time.Millisecond), d.id, d.what)
	}
	ev := evidence(msg, nil, d.ex, d.at)
	ev.Fault = d.fault
	return ev
}

// refusesResumption reports whether the upstream answered a GET that
// carried Last-Event-ID with 405: the server offers no stream at the
// endpoint (2025-11-25 allows it; a server of 2026-07-28 answers an older
// client so), and a client that stops reconnecting has understood it.
func refusesResumption(x *exch) bool {
	return x.method == http.MethodGet && x.fwdHasLEID && x.status == http.StatusMethodNotAllowed && x.origin == observe.FromUpstream
}
