package verify

import (
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
)

// needCut is the need of a lose fault at index 0.
var needCut = []faults.Need{{Fault: 0, Kind: "lose", Any: []string{faults.ExercisesCut}}}

// TestCoverageCountsCuts: each cut with an answer pending is counted by
// where it fell for the client (right before the response when the
// first event it did not get was the response), one with no id delivered as
// unrecoverable, and the resumption that follows by how it ended; a cut
// after the answer exercises nothing.
func TestCoverageCountsCuts(t *testing.T) {
	tl := initializedWith(t, Options{Faults: 1})
	tl.call("s1", 1, "tools/call").stream200().end(observe.FaultClosed)
	tl.call("s1", 2, "tools/call").stream200().send(primeRetry("b1", 100)).end(observe.FaultClosed)
	tl.call("s1", 3, "tools/call").stream200().send(prime("c1")).send(note("c2")).
		send(note("c3").as(observe.Cut, fault(0, "close"))).end(observe.FaultClosed)
	tl.call("s1", 4, "tools/call").stream200().send(prime("d1")).send(resp("d2", 4)).end(observe.FaultClosed)
	tl.call("s1", 5, "tools/call").stream200().send(prime("e1")).send(note("e2")).
		send(resp("e3", 5).as(observe.Lost, fault(0, "lose"))).end(observe.FaultClosed)
	tl.wait(200 * ms)
	tl.get("s1", "b1").stream200().send(note("b2")).send(resp("b3", 2)).end(observe.Complete)
	tl.get("s1", "c2").stream200().send(note("c3")).end(observe.Complete)
	r := tl.final()
	c := r.Coverage
	if c == nil {
		t.Fatal("no coverage")
	}
	got := [...]int{c.Cuts, c.BeforeEvent, c.BeforeResponse, c.AfterPriming, c.MidStream, c.Unrecoverable, c.Resumptions, c.Complete, c.Incomplete}
	if want := [...]int{4, 1, 1, 1, 1, 1, 2, 1, 1}; got != want {
		t.Errorf("cuts, before, before the response, after priming, mid-stream, unrecoverable, resumptions, complete, incomplete = %v, want %v\n%+v", got, want, c)
	}
	if len(c.Unrecovered) != 1 || c.Unrecovered[0].Where != cutBeforeEvent || !strings.Contains(c.Unrecovered[0].Why, "no event id had reached the client") ||
		len(c.Unrecovered[0].Requests) != 1 || c.Unrecovered[0].Requests[0] != "1 (tools/call)" {
		t.Errorf("unrecovered %+v", c.Unrecovered)
	}
	want := "exercised: 4 cuts with an answer pending (1 before any event, 1 right before the response, 1 after the priming event, 1 mid-stream, 1 unrecoverable), 2 resumptions (1 complete, 1 incomplete), 0 re-issues"
	if line := c.Line(); !strings.HasPrefix(line, want) {
		t.Errorf("line %q, want it to begin %q", line, want)
	}
}

// TestCoverageUnrecoverableNamesTheClientFailure: a client that fails
// after a cut no pair could recover is reported as failing after it.
func TestCoverageUnrecoverableNamesTheClientFailure(t *testing.T) {
	tl := initializedWith(t, Options{Faults: 1})
	tl.call("s1", 1, "tools/call").stream200().end(observe.FaultClosed)
	tl.wait(time.Second)
	tl.v.ClientExited(report.Command{Args: []string{"client"}, ExitCode: 1, Error: "exit status 1"})
	want := "the client command failed (exit status 1) after 1 cut no conforming pair could recover: exchange 2 (request 1 (tools/call)) was cut before any event"
	expectVerdict(t, tl.final(), report.VerdictFail, want)
}

// stubDraws stands for the faults in force: fault 0 matched two streams
// and its draws skipped both.
type stubDraws struct{}

func (stubDraws) Stats() []faults.FaultStats {
	return []faults.FaultStats{{Index: 0, Kind: "lose", Drawn: 2, Skipped: 2, On: "stream", Probability: 0.5}}
}

func (stubDraws) FiringSeed(int) (uint64, int, int, bool) { return 7, 2, 2, true }

// TestPassNeedsItsPurpose: a run that would pass is inconclusive when what
// its profile exists for never happened, whatever else fired, and says
// why; it passes once the cut and its resumption happen.
func TestPassNeedsItsPurpose(t *testing.T) {
	t.Run("a decorative fault alone", func(t *testing.T) {
		tl := initializedWith(t, Options{Faults: 2, Needs: []faults.Need{{Fault: 1, Kind: "close", Any: []string{faults.ExercisesCut}}}, Draws: stubDraws{}})
		tl.call("s1", 1, "tools/call", fired(fault(0, "latency"))).stream200().send(prime("a1")).send(resp("a2", 1)).end(observe.Complete)
		r := tl.final()
		want := "fault 1 (close), which exercises a cut with an answer pending, never acted: nothing it selects came"
		if r.Verdict != report.VerdictInconclusive || !strings.Contains(r.Why, want) || r.Totals.Faults != 1 {
			t.Errorf("verdict %s (%s), %d faults; want inconclusive with %q", r.Verdict, r.Why, r.Totals.Faults, want)
		}
	})
	t.Run("draws that skipped every stream", func(t *testing.T) {
		tl := initializedWith(t, Options{Faults: 1, Seed: 42, Needs: needCut, Draws: stubDraws{}})
		tl.toolCall("s1", 1, "a1", "a2", "a3")
		want := "fault 0 (lose), which exercises a cut with an answer pending, never acted: it matched 2 streams; probability 0.5 skipped 2 of them at seed 42; --seed 7 fires it on every one it skipped"
		expectVerdict(t, tl.final(), report.VerdictInconclusive, want)
	})
	t.Run("offline, where the draws are not known", func(t *testing.T) {
		tl := initializedWith(t, Options{Faults: 1, Needs: needCut})
		tl.toolCall("s1", 1, "a1", "a2", "a3")
		r := tl.final()
		if want := "no fault fired: fault 0 (lose), which exercises a cut with an answer pending, never acted"; r.Verdict != report.VerdictInconclusive || r.Why != want {
			t.Errorf("verdict %s (%s), want inconclusive (%s)", r.Verdict, r.Why, want)
		}
	})
	t.Run("a cut after the answer", func(t *testing.T) {
		tl := initializedWith(t, Options{Faults: 1, Needs: needCut})
		tl.call("s1", 1, "tools/call").stream200().send(prime("a1")).send(resp("a2", 1)).
			send(note("a3").as(observe.Lost, fault(0, "lose"))).end(observe.FaultClosed)
		expectVerdict(t, tl.final(), report.VerdictInconclusive, "acted 1 time, never while an answer was pending")
	})
	t.Run("the cut and its resumption", func(t *testing.T) {
		tl := lostResponseOn(newTimeline(t, Options{Faults: 1, Needs: needCut}))
		tl.get("s1", "a2").stream200().send(note("a3")).send(resp("a4", 1)).end(observe.Complete)
		r := tl.final()
		if r.Verdict != report.VerdictPass || len(r.Coverage.Missing) != 0 || r.Coverage.Cuts != 1 || r.Coverage.Complete != 1 {
			t.Errorf("verdict %s (%s), coverage %+v", r.Verdict, r.Why, r.Coverage)
		}
	})
}

// TestCoverageReissue: under 2026-07-28 a cut call is recovered by its
// re-issue: the cut is never unrecoverable, the re-issue is counted, and
// the need of a cutting fault is met.
func TestCoverageReissue(t *testing.T) {
	tl := newTimeline(t, Options{Faults: 1, Needs: []faults.Need{{Fault: 0, Kind: "close", Any: []string{faults.ExercisesCut}}}}).speakStateless()
	tl.cutCall(1)
	tl.wait(30 * ms)
	tl.scall(2, "tools/call", "add").stream200().send(sresp(2)).end(observe.Complete)
	r := tl.final()
	c := r.Coverage
	if r.Verdict != report.VerdictPass || c.Cuts != 1 || c.Unrecoverable != 0 || c.Reissues != 1 {
		t.Errorf("verdict %s (%s), coverage %+v; want a pass with 1 cut and 1 re-issue", r.Verdict, r.Why, c)
	}
}

// TestPurposeOfAnArmedFault: an idle close armed on a stream that ended
// before its silence came never acted, and the reason says it was armed.
func TestPurposeOfAnArmedFault(t *testing.T) {
	need := []faults.Need{{Fault: 0, Kind: "idle-close", Any: []string{faults.ExercisesCut, faults.ExercisesReconnect}}}
	tl := initializedWith(t, Options{Faults: 1, Needs: need, Draws: stubDraws{}})
	tl.call("s1", 1, "tools/call").stream200(respFired(fault(0, "idle-close"))).send(prime("a1")).send(resp("a2", 1)).end(observe.Complete)
	r := tl.final()
	want := "no fault fired: fault 0 (idle-close), which exercises a cut with an answer pending or a standalone stream cut, was armed on 1 stream, and what it waits for never came while they lasted"
	if r.Verdict != report.VerdictInconclusive || r.Why != want {
		t.Errorf("verdict %s (%s), want inconclusive (%s)", r.Verdict, r.Why, want)
	}
}

// TestCoverageOpenResumptionAnswered: a resumption whose answer came is
// complete even when the report is made before its end is observed (the
// client's close racing the run's end), so that the exercised line does
// not depend on that race.
func TestCoverageOpenResumptionAnswered(t *testing.T) {
	tl := initializedWith(t, Options{Faults: 1})
	tl.call("s1", 1, "tools/call").stream200().send(primeRetry("a1", 100)).end(observe.FaultClosed)
	tl.wait(200 * ms)
	tl.get("s1", "a1").stream200().send(note("a2")).send(resp("a3", 1))
	c := tl.final().Coverage
	if c.Resumptions != 1 || c.Complete != 1 {
		t.Errorf("resumptions %d, complete %d; want 1 and 1\n%+v", c.Resumptions, c.Complete, c)
	}
	if want := "1 resumption (1 complete)"; !strings.Contains(c.Line(), want) {
		t.Errorf("line %q lacks %q", c.Line(), want)
	}
}
