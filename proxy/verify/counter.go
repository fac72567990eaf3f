package verify

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/frayproxy/fray/proxy/checks"
)

// Inferring what never crossed fray. A server that closes its own stream
// (SEP-1699 polling) goes on producing events while the client is away;
// fray sees none of them, so a replay that skips one cannot be checked
// against what was sent. Many servers number a stream's events: the Go
// SDK writes "<stream>_<n>", hand-written servers count. When every
// connection of a stream counted its ids by one, a resumption from
// PREFIX<k> whose first event is PREFIX<m>, m > k+1, skipped the events
// numbered between them that fray never saw on any stream of the session.
//
// Only that jump, at the start of a resumption, is inferred; a stream
// whose ids jump, repeat or change prefix within a connection infers
// nothing.

// maxCounterDigits bounds the counter a suffix is read as.
const maxCounterDigits = 18

// maxInferred bounds the numbers looked up for one resumption.
const maxInferred = 1024

// idCounter is what a logical stream's ids say of a counter.
type idCounter struct {
	prefix string
	seen   bool // prefix is set
	steps  int  // consecutive ids, within a connection, that counted by one
	broken bool // some did not
}

// splitCounter splits an id into a prefix and the decimal number that
// ends it; ok is false when it does not end in digits.
func splitCounter(id []byte) (prefix []byte, n uint64, ok bool) {
	// One pass from the end, each digit worth ten times the last: it
	// runs on every event with an id.
	i, unit := len(id), uint64(1)
	for stop := max(0, len(id)-maxCounterDigits); i > stop; i-- {
		d := id[i-1] - '0'
		if d > 9 {
			break
		}
		n += uint64(d) * unit
		unit *= 10
	}
	if i == len(id) {
		return nil, 0, false
	}
	return id[:i], n, true
}

// countID notes an id the upstream sent on x: whether the stream's ids go
// on counting by one within the connection.
func (v *Verifier) countID(x *exch, id []byte) {
	l := x.srv
	if l == nil || l.ctr.broken {
		return
	}
	p, n, ok := splitCounter(id)
	switch {
	case !ok:
		l.ctr.broken = true
		return
	case !l.ctr.seen:
		l.ctr.prefix, l.ctr.seen = string(p), true
	case string(p) != l.ctr.prefix:
		l.ctr.broken = true
		return
	}
	switch {
	case !x.ctrHas:
		x.ctrFirst, x.ctrHas = n, true
	case n == x.ctrLast+1:
		l.ctr.steps++
	default:
		l.ctr.broken = true
	}
	x.ctrLast = n
}

// judgeInferredGap judges, when a resumption ends, the jump between the
// Last-Event-ID fray forwarded and the first id the server sent on it
// (server.replay-complete, evidence marked inferred).
func (v *Verifier) judgeInferredGap(x *exch, at time.Duration) {
	r, l := x.resume, x.srv
	if r == nil || !r.known || l == nil || !x.ctrHas || !l.ctr.seen {
		return
	}
	p, k, ok := splitCounter([]byte(r.x))
	if !ok || string(p) != l.ctr.prefix || x.ctrFirst <= k+1 {
		return
	}
	if l.ctr.broken || l.ctr.steps < 2 {
		v.excuse(cReplayComplete, "the ids do not count by one: nothing inferred of events fray never saw")
		return
	}
	var missing []string
	for n := k + 1; n < x.ctrFirst && n-k <= maxInferred; n++ {
		id := l.ctr.prefix + strconv.FormatUint(n, 10)
		if _, seen := x.sess.ids.upstreamString(id); !seen {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return
	}
	v.apply(cReplayComplete)
	first := l.ctr.prefix + strconv.FormatUint(x.ctrFirst, 10)
	shown := missing[:min(len(missing), 3)]
	more := ""
	if len(missing) > len(shown) {
		more = ", ..."
	}
	ev := evidence(fmt.Sprintf("inferred: the stream's ids count by one, and the resumption from %q began at %q, skipping %d event(s) the server produced while the client was away, never seen by fray (%s%s)",
		r.x, first, len(missing), strings.Join(shown, ", "), more), x.sess, x.num, at)
	ev.EventIDs = append([]string{r.x, first}, shown...)
	ev.Inferred = true
	ev.Related = related(l.origin)
	ev.Fault = l.endFault
	v.find(cReplayComplete, levelError, ev)
	if l.blamed == "" {
		l.blamed = checks.ServerReplayComplete
	}
}
