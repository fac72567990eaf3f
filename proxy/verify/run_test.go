package verify

import (
	"reflect"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
)

// TestObserveRunIsObserve: a Verifier given a story's observations in runs
// (ObserveRun, as the engine's queue passes its events on) reports exactly
// what one given them one at a time reports, whatever the runs' length: a
// lost answer and its replay, a resumption, a response sent twice, a
// duplicate fault's copies and a silent request, in two sessions.
func TestObserveRunIsObserve(t *testing.T) {
	opts := Options{Profile: "story", Seed: 3}
	var log []observe.Observation
	tl := newTimeline(t, opts)
	tl.log = &log
	lostResponseOn(tl)
	tl.get("s1", "a2").stream200().send(note("a3")).send(resp("a4", 1)).end(observe.Complete)
	tl.initialize("s2")
	tl.toolCall("s2", 2, "b1", "b2", "b3")
	tl.call("s2", 3, "tools/call").stream200().send(prime("c1")).send(resp("c2", 3)).send(resp("c3", 3)).end(observe.Complete)
	dup := resp("d2", 4)
	dup.copies = 3
	dup.fired = append(dup.fired, fault(1, "duplicate"))
	tl.call("s1", 4, "tools/call").stream200().send(prime("d1")).send(dup).end(observe.Complete)
	tl.call("s2", 5, "tools/list").stream200().send(prime("e1"))
	tl.wait(2 * time.Minute)
	want := tl.final()
	if want.Verdict != report.VerdictFail || len(log) < 30 {
		t.Fatalf("the story gave verdict %s from %d observations; want a failing run of 30 or more to compare", want.Verdict, len(log))
	}
	for _, n := range []int{1, 2, 7, 32, len(log)} {
		v := New(opts)
		for i := 0; i < len(log); i += n {
			v.ObserveRun(log[i:min(i+n, len(log))])
		}
		if got := v.Final(tl.at); !reflect.DeepEqual(got, want) {
			t.Errorf("in runs of %d: the report differs from one observation at a time:\n got %+v\nwant %+v", n, got, want)
		}
	}
}
