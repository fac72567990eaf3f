package verify

import (
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
)

// emptyResumes cuts a tools/call stream after its priming event (retry
// 100 ms unless noRetry) and has the client resume it from that id after
// each wait, every resumption answered 200 and ended before any event.
func emptyResumes(tl *timeline, noRetry bool, waits ...time.Duration) {
	p := primeRetry("a1", 100)
	if noRetry {
		p = prime("a1")
	}
	tl.call("s1", 1, "tools/call").stream200().send(p.as(observe.Delivered, fault(1, "close"))).end(observe.FaultClosed)
	for _, w := range waits {
		tl.wait(w)
		tl.get("s1", "a1").stream200().end(observe.FaultClosed)
	}
}

// TestResumeLoop: the fourth resumption in a row from one id after an
// empty answer is judged; it is a loop when its wait is not half as long
// again as the first's, and no loop when the waits grow or the client
// stops; without a retry client.backoff judges instead.
func TestResumeLoop(t *testing.T) {
	for _, tc := range []struct {
		name    string
		noRetry bool
		waits   []time.Duration
		applied int
		found   int
	}{
		{"one pace", false, []time.Duration{100 * ms, 100 * ms, 100 * ms, 100 * ms, 100 * ms}, 1, 1},
		{"one pace for ever", false, []time.Duration{100 * ms, 100 * ms, 100 * ms, 100 * ms, 100 * ms, 100 * ms, 100 * ms, 100 * ms, 100 * ms}, 1, 1},
		{"growing by a half", false, []time.Duration{100 * ms, 200 * ms, 300 * ms, 450 * ms, 675 * ms}, 1, 0},
		{"doubling", false, []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms, 1600 * ms}, 1, 0},
		{"stops after three", false, []time.Duration{100 * ms, 100 * ms, 100 * ms, 100 * ms}, 0, 0},
		{"no retry", true, []time.Duration{100 * ms, 100 * ms, 100 * ms, 100 * ms, 100 * ms}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := initialized(t)
			tl.wait(100 * ms)
			emptyResumes(tl, tc.noRetry, tc.waits...)
			c := check(t, tl.report(), checks.ClientResumeLoop)
			if c.Applied != tc.applied || c.Count != tc.found {
				t.Errorf("applied %d, found %d; want %d, %d: %+v", c.Applied, c.Count, tc.applied, tc.found, c.Evidence)
			}
		})
	}
}

// TestResumeLoopNeedsOneID: resumptions from different ids, each after an
// empty answer, are no run: the client got something new in between.
func TestResumeLoopNeedsOneID(t *testing.T) {
	tl := initialized(t)
	tl.wait(100 * time.Millisecond)
	tl.call("s1", 1, "tools/call").stream200().send(primeRetry("a1", 100).as(observe.Delivered, fault(1, "close"))).end(observe.FaultClosed)
	for _, id := range []string{"a1", "a1", "a1"} {
		tl.wait(100 * time.Millisecond)
		tl.get("s1", id).stream200().end(observe.FaultClosed)
	}
	tl.wait(100 * time.Millisecond)
	tl.get("s1", "a1").stream200().send(note("a2").as(observe.Delivered)).end(observe.FaultClosed)
	for range 4 {
		tl.wait(100 * time.Millisecond)
		tl.get("s1", "a2").stream200().end(observe.FaultClosed)
	}
	expect(t, tl.report(), checks.ClientResumeLoop, report.StatusSkip, 0)
}
