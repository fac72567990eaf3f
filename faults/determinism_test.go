package faults_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/mcp"
)

// chaos is a profile whose every decision draws randomness.
func chaos() []faults.Spec {
	return []faults.Spec{
		spec("drop", "probability", 0.2, "priming", false),
		spec("delay", "delay", "10ms", "jitter", "90ms", "probability", 0.5),
		spec("duplicate", "probability", 0.1),
		spec("lose", "after_events", int64(2), "events", int64(3), "probability", 0.5, "stream", "post"),
		spec("reset", "after_events", int64(4), "probability", 0.3),
		spec("latency", "delay", "5ms", "jitter", "50ms", "probability", 0.5),
		spec("status", "status", int64(503), "probability", 0.2, "stream", "resume"),
	}
}

type traffic struct {
	ex  mcp.Exchange
	evs []mcp.Event
}

// synthetic builds sessions × streams of mixed traffic.
func synthetic(sessions, streams int) []traffic {
	var out []traffic
	types := []mcp.StreamType{mcp.StreamPost, mcp.StreamGet, mcp.StreamResume}
	for s := 1; s <= sessions; s++ {
		for n := 1; n <= streams; n++ {
			ex := mcp.Exchange{Method: "POST", Path: "/mcp", Stream: types[n%3], Session: fmt.Sprintf("random-%d", rand.Int()),
				SessionSeq: s, StreamSeq: n, RPCKind: mcp.RPCRequest, RPCMethod: "tools/call", RPCID: fmt.Sprint(n)}
			evs := []mcp.Event{ev(0, priming)}
			for i := 1; i < 12; i++ {
				evs = append(evs, ev(i, withID(fmt.Sprint(i)), at(time.Duration(i)*time.Second)))
			}
			out = append(out, traffic{ex: ex, evs: evs})
		}
	}
	return out
}

type decisions struct {
	exchange faults.ExchangeAction
	start    faults.StreamAction
	events   []faults.EventAction
}

// replay drives every stream of tr through plan, from `workers`
// goroutines, in the order given by perm, and returns decisions by stream.
func replay(plan faults.Plan, tr []traffic, perm []int, workers int) []decisions {
	out := make([]decisions, len(tr))
	work := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range work {
				ex := tr[i].ex
				d := decisions{exchange: plan.Exchange(&ex)}
				d.start, d.events = drive(plan, &ex, append([]mcp.Event(nil), tr[i].evs...))
				out[i] = d
			}
		})
	}
	for _, i := range perm {
		work <- i
	}
	close(work)
	wg.Wait()
	return out
}

// inOrder is the permutation that leaves n streams in order.
func inOrder(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func TestSameSeedSameDecisions(t *testing.T) {
	tr := synthetic(4, 30)
	forward := inOrder(len(tr))
	backward := rand.New(rand.NewPCG(1, 2)).Perm(len(tr))
	a := replay(compile(t, 42, chaos()...), tr, forward, 1)
	b := replay(compile(t, 42, chaos()...), tr, backward, 8)
	fired := 0
	for i := range a {
		if !reflect.DeepEqual(a[i], b[i]) {
			t.Fatalf("stream %d decided differently:\n%+v\n%+v", i, a[i], b[i])
		}
		for _, e := range a[i].events {
			fired += len(e.Fired)
		}
	}
	if fired == 0 {
		t.Fatal("no fault fired; the test proves nothing")
	}
	c := replay(compile(t, 43, chaos()...), tr, forward, 1)
	if reflect.DeepEqual(a, c) {
		t.Error("seeds 42 and 43 gave the same decisions")
	}
}

func TestDisablingOneFaultLeavesOthersAlone(t *testing.T) {
	tr := synthetic(2, 10)
	perm := inOrder(len(tr))
	full := compile(t, 7, chaos()...)
	part := compile(t, 7, chaos()...)
	if err := part.SetEnabled(0, false); err != nil {
		t.Fatal(err)
	}
	a, b := replay(full, tr, perm, 1), replay(part, tr, perm, 1)
	for i := range a {
		for j := range a[i].events {
			if a[i].events[j].Delay != b[i].events[j].Delay {
				t.Fatalf("stream %d event %d: delay %v with drop on, %v with it off", i, j, a[i].events[j].Delay, b[i].events[j].Delay)
			}
		}
	}
}

// TestArrivalOrderDoesNotChangeDecisions: a proxy numbers a session's
// streams as they arrive, so concurrent requests get different numbers
// from run to run; a request is decided by its id, not its number.
func TestArrivalOrderDoesNotChangeDecisions(t *testing.T) {
	tr := synthetic(2, 30)
	perm := inOrder(len(tr))
	shuffled := make([]traffic, len(tr))
	copy(shuffled, tr)
	Rand := rand.New(rand.NewPCG(3, 4))
	for i := range shuffled {
		shuffled[i].ex.StreamSeq = 1 + Rand.IntN(1000)
	}
	a := replay(compile(t, 42, chaos()...), tr, perm, 1)
	b := replay(compile(t, 42, chaos()...), shuffled, perm, 1)
	for i := range a {
		if !reflect.DeepEqual(a[i], b[i]) {
			t.Fatalf("request %s decided differently with another stream number:\n%+v\n%+v", tr[i].ex.RPCID, a[i], b[i])
		}
	}
}
