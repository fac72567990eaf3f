package faults_test

import (
	"fmt"
	"testing"

	"github.com/frayproxy/fray/faults"
)

// nonMatching is n faults that match the stream but never its events.
func nonMatching(n int) []faults.Spec {
	var out []faults.Spec
	for i := range n {
		switch i % 4 {
		case 0:
			out = append(out, spec("drop", "event", fmt.Sprintf("never-%d", i)))
		case 1:
			out = append(out, spec("delay", "delay", "1s", "rpc_method", "sampling/*"))
		case 2:
			out = append(out, spec("corrupt", "nth", int64(1<<30+i)))
		default:
			out = append(out, spec("close", "after_events", int64(1), "priming", true, "event", "prime"))
		}
	}
	return out
}

func BenchmarkStreamPlanEvent(b *testing.B) {
	for _, n := range []int{0, 20} {
		b.Run(fmt.Sprintf("faults=%d", n), func(b *testing.B) {
			set := compile(b, 1, nonMatching(n)...)
			sp := set.Stream(postEx())
			e := ev(1, withID("1"), typed("message"))
			b.ReportAllocs()
			for b.Loop() {
				e.Index = (e.Index + 1) % 1000
				if a := sp.Event(&e); len(a.Fired) != 0 {
					b.Fatalf("fired: %+v", a.Fired)
				}
			}
		})
	}
}

func TestNoAllocationWhenNothingFires(t *testing.T) {
	set := compile(t, 1, nonMatching(20)...)
	sp := set.Stream(postEx())
	e := ev(1, withID("1"), typed("message"))
	allocs := testing.AllocsPerRun(1000, func() {
		e.Index++
		sp.Event(&e)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per event with 20 idle faults, want 0", allocs)
	}
}
