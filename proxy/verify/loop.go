package verify

import (
	"fmt"
	"time"
)

// The loop bound of client.resume-loop: the loopCount-th attempt in a row
// from one Last-Event-ID, each after an empty answer, is judged, and it
// is a loop unless the client waited at least loopGrowth times as long
// before it as before the first of them.
const (
	loopCount  = 4
	loopGrowth = 1.5
)

// loopRun is a logical stream's run of resumptions from one Last-Event-ID,
// each begun after the one before was answered 200 with a stream that
// ended before any event reached the client. The zero value is no run.
type loopRun struct {
	leid    string
	last    uint64        // the exchange of its last attempt
	emptyOf uint64        // the last attempt that ended so
	repeats int           // attempts after an empty one, in a row
	first   time.Duration // the wait before the first of them
	found   bool          // one finding per stream
}

// noteAttemptEnd records an attempt for l, x, that ended with nothing
// delivered to the client: to the client, a resumption that failed.
// Whoever ended it (fray's cut, a server that answers a failed replay with
// an empty stream) looks alike from the client's side, and the client's
// answer to it is what client.resume-loop judges.
func noteAttemptEnd(x *exch, l *logical) {
	if x.attemptOf == l && x.status == 200 && x.cliEvents == 0 {
		l.loop.emptyOf = x.num
	}
}

// judgeLoop judges x, an attempt for l begun wait after l's last failure
// (client.resume-loop). It applies where a retry was delivered: without
// one, client.backoff judges the waits. A client that resumes, again and
// again and at one pace, a stream that keeps coming back empty never
// gets its answer and never stops; one whose waits grow, or that stops,
// is no loop.
func (v *Verifier) judgeLoop(l *logical, x *exch, wait time.Duration) {
	r := &l.loop
	after := r.last != 0 && r.emptyOf == r.last
	r.last = x.num
	if !after || !x.clientHasLEID || x.clientLEID != r.leid {
		r.leid, r.repeats = x.clientLEID, 0
		return
	}
	r.repeats++
	if r.repeats == 1 {
		r.first = wait
	}
	if r.repeats != loopCount || r.found || !l.hasRetry {
		return
	}
	v.apply(cResumeLoop)
	if float64(wait) >= float64(r.first)*loopGrowth {
		return
	}
	r.found = true
	ev := evidence(fmt.Sprintf("resumed from Last-Event-ID %q %d times in a row, each after an empty answer, waiting %v before the last and %v before the first (retry %v): the waits do not grow",
		x.clientLEID, loopCount, wait.Round(time.Millisecond), r.first.Round(time.Millisecond), l.retry), x.sess, x.num, x.at)
	ev.EventIDs = []string{x.clientLEID}
	ev.Related = related(append([]uint64{l.origin}, l.attempts...)...)
	ev.Fault = l.endFault
	v.find(cResumeLoop, levelError, ev)
}
