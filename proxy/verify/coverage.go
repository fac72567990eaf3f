package verify

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
)

// The positions of a cut, as the client saw its stream.
const (
	cutBeforeEvent    = "before any event"
	cutBeforeResponse = "right before the response"
	cutAfterPriming   = "after the priming event"
	cutMidStream      = "mid-stream"
)

// noteDelivered counts what reached the client on x, for where a cut
// falls.
func noteDelivered(x *exch, e *observe.Event) {
	if e.Fate != observe.Delivered {
		if !x.cliKept {
			// The first event the client did not get: a cut that kept
			// the response back fell right before it.
			x.cliKept = true
			x.keptResponse = e.RPCKind.Answers()
		}
		return
	}
	x.cliEvents++
	if e.Dispatched && len(e.Data) > 0 {
		x.cliMsgs++
	}
}

// cutWhere says where a cut of x fell for the client.
func cutWhere(x *exch) string {
	switch {
	case x.cliEvents == 0:
		return cutBeforeEvent
	case x.keptResponse:
		return cutBeforeResponse
	case x.cliMsgs == 0:
		return cutAfterPriming
	}
	return cutMidStream
}

// noteStreamEnd counts what the end of the last open stream x of l
// exercised: a cut with an answer pending (and whether a pair could
// recover it), a close by the server before the answer, a standalone
// stream cut.
func (v *Verifier) noteStreamEnd(x *exch, l *logical, end *observe.End, at time.Duration) {
	pending := l.reqs > 0
	switch {
	case end.Cause.ByFault() && pending:
		v.noteCut(x, l, at)
	case end.Cause.ByFault() && l.kind == mcp.StreamGet:
		v.cov.StandaloneCuts++
	case end.Cause == observe.Complete && pending && l.kind == mcp.StreamPost:
		v.cov.ServerCloses++
	}
}

// noteResumed counts how the resumption x of l's stream ended; end is
// nil for one still open when its session is dropped (the run's end).
func (v *Verifier) noteResumed(x *exch, l *logical, end *observe.End) {
	if !x.clientHasLEID || l == nil || l.kind != mcp.StreamPost {
		return
	}
	switch {
	case l.reqs == 0:
		v.cov.Complete++
	case end != nil && end.Cause.ByFault():
		v.cov.Cut++
	case x.cliMsgs == 0:
		v.cov.Silent++
	default:
		v.cov.Incomplete++
	}
}

// noteRefused counts a resumption answered with an error status, or not
// at all.
func (v *Verifier) noteRefused(x *exch) {
	if x.clientHasLEID {
		v.cov.Refused++
	}
}

// noteCut counts a cut of x, a stream of l, while an answer was pending.
func (v *Verifier) noteCut(x *exch, l *logical, at time.Duration) {
	c := &v.cov
	c.Cuts++
	where := cutWhere(x)
	switch where {
	case cutBeforeEvent:
		c.BeforeEvent++
	case cutBeforeResponse:
		c.BeforeResponse++
	case cutAfterPriming:
		c.AfterPriming++
	default:
		c.MidStream++
	}
	why := unrecoverable(x, l)
	if why == "" {
		l.unrecoverable = ""
		return
	}
	c.Unrecoverable++
	l.unrecoverable = fmt.Sprintf("the stream was cut %s, where no conforming pair could recover it: %s", where, why)
	if len(c.Unrecovered) >= report.MaxUnrecovered {
		return
	}
	u := report.Unrecovered{Exchange: x.num, Session: x.sess.seq, AtMS: at.Milliseconds(), Where: where, Why: why, Fault: firstFault(x.endFault, l.endFault)}
	u.Requests = requestsOn(x.sess, l)
	c.Unrecovered = append(c.Unrecovered, u)
}

// unrecoverable says why no conforming pair could recover a cut of x, a
// stream of l, with an answer pending; "" when one could.
func unrecoverable(x *exch, l *logical) string {
	switch {
	case mcp.Stateless(l.protocol):
		return "" // the client re-issues the call
	case l.kind == mcp.StreamLegacy || l.sess.legacy:
		return "the legacy HTTP+SSE transport offers no resumption"
	case l.protocol != "" && !mcp.Resumable(l.protocol):
		return fmt.Sprintf("revision %q offers no resumption", l.protocol)
	case l.idUncertain:
		return ""
	case !l.hasID && !l.everID && !x.sawID:
		return "no event id had reached the client, and the server sent none on the stream (it offers no resumption)"
	case !l.hasID && l.idFault != nil:
		return "no event id had reached the client: fray kept the ids back (" + l.idFault.Kind + ")"
	case !l.hasID:
		return "no event id had reached the client to resume from"
	}
	return ""
}

// requestsOn names the requests of s whose answer l still owed, in order
// of id.
func requestsOn(s *session, l *logical) []string {
	var out []string
	for _, r := range s.pending {
		if r.lg == l && r.delivered == 0 {
			out = append(out, fmt.Sprintf("%s (%s)", r.id, r.method))
		}
	}
	slices.Sort(out)
	return out
}

// coverage returns the coverage so far, with what the needs of the
// profile still miss.
func (v *Verifier) coverage() *report.Coverage {
	c := v.cov
	c.Unrecovered = slices.Clone(v.cov.Unrecovered)
	c.Resumptions = v.totals.Resumptions
	c.Complete += v.openResumptionsAnswered()
	c.RetryWaits = v.checks[cRetryHonoured].applied
	c.Missing = v.missing(&c)
	return &c
}

// openResumptionsAnswered counts the resumptions of answer streams still
// open when the report is made whose answers have all come: complete,
// though their end (the client closing, or fray ending the stream at
// shutdown) has not been observed yet. Without them the count would
// depend on whether the end won the race with the report.
func (v *Verifier) openResumptionsAnswered() int {
	n := 0
	for _, x := range v.exch {
		if x.clientHasLEID && x.cli != nil && x.cli.kind == mcp.StreamPost && x.cli.reqs == 0 {
			n++
		}
	}
	return n
}

// exercised reports whether c shows the recovery named p.
func exercised(c *report.Coverage, p string) bool {
	switch p {
	case faults.ExercisesCut:
		return c.Cuts > c.Unrecoverable
	case faults.ExercisesReconnect:
		return c.StandaloneCuts > 0
	case faults.ExercisesNewSession:
		return c.SessionsLost > 0
	case faults.ExercisesRetry:
		return c.Refused > 0 || c.StandaloneRefused > 0
	}
	return false
}

// missing says, for each need of the profile that c does not show, what
// never happened and why, as far as fray knows.
func (v *Verifier) missing(c *report.Coverage) []string {
	var out []string
	for _, n := range v.needs {
		if slices.ContainsFunc(n.Any, func(p string) bool { return exercised(c, p) }) {
			continue
		}
		out = append(out, v.why(n, c))
	}
	return out
}

// why says why need n never happened.
func (v *Verifier) why(n faults.Need, c *report.Coverage) string {
	what := describeNeed(n.Any)
	if n.Fault < 0 {
		return fmt.Sprintf("the profile exercises %s, and none happened", what)
	}
	head := fmt.Sprintf("fault %d (%s), which exercises %s,", n.Fault, n.Kind, what)
	fired := v.firedBy[n.Fault]
	var st faults.FaultStats
	var seed uint64
	var hasStats bool
	if v.opts.Draws != nil {
		for _, s := range v.opts.Draws.Stats() {
			if s.Index == n.Fault {
				st, hasStats = s, true
			}
		}
		seed = v.opts.Seed
	}
	switch {
	case fired > 0 && slices.Contains(n.Any, faults.ExercisesCut) && c.Cuts > 0:
		return fmt.Sprintf("%s acted %s, but every cut was unrecoverable (%s)", head, plural(fired, "time"), c.Unrecovered[0].Why)
	case fired > 0 && slices.Contains(n.Any, faults.ExercisesCut):
		return fmt.Sprintf("%s acted %s, never while an answer was pending", head, plural(fired, "time"))
	case fired > 0:
		return fmt.Sprintf("%s acted %s, yet fray saw no %s", head, plural(fired, "time"), what)
	case v.armedBy[n.Fault] > 0:
		return fmt.Sprintf("%s was armed on %s, and what it waits for never came while they lasted", head, plural(v.armedBy[n.Fault], "stream"))
	case hasStats && st.Skipped > 0:
		msg := fmt.Sprintf("%s never acted: it matched %s; probability %g skipped %d of them at seed %d",
			head, plural(int(st.Drawn), st.On), st.Probability, st.Skipped, seed)
		if st.Skipped < st.Drawn {
			msg += " (the others gave it no chance to act)"
		}
		if s, fired, skipped, ok := v.opts.Draws.FiringSeed(n.Fault); ok && fired == skipped {
			msg += fmt.Sprintf("; --seed %d fires it on every one it skipped", s)
		} else if ok {
			msg += fmt.Sprintf("; --seed %d fires it on %d of the %d it skipped", s, fired, skipped)
		}
		return msg + "; first = true makes it act on its first opportunity"
	case v.opts.Draws == nil:
		// Offline: a trace records what acted, not the draws that skipped.
		return head + " never acted"
	}
	return head + " never acted: nothing it selects came"
}

// describeNeed names the recoveries of a need.
func describeNeed(any []string) string {
	words := make([]string, len(any))
	for i, p := range any {
		words[i] = purposeWords[p]
	}
	return joinOr(words)
}

var purposeWords = map[string]string{
	faults.ExercisesCut:        "a cut with an answer pending",
	faults.ExercisesReconnect:  "a standalone stream cut",
	faults.ExercisesNewSession: "a new session after a 404",
	faults.ExercisesRetry:      "a retry after an error answer",
}

func joinOr(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if noun[len(noun)-1] == 'y' {
		return fmt.Sprintf("%d %sies", n, noun[:len(noun)-1])
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
