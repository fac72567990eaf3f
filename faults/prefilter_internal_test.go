package faults

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/mcp"
)

// TestPrefilterAgreesWithEveryFault drives random event sequences through
// two copies of the same stream plan: one asks only the slots the
// prefilter lets through, the other asks every slot. Their decisions must
// be the same, event by event, or the prefilter ruled out a fault that
// would have fired.
func TestPrefilterAgreesWithEveryFault(t *testing.T) {
	methods := []string{"notifications/progress", "notifications/message", "tools/call", ""}
	types := []string{"", "message", "ping", "endpoint"}
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 1))
		specs := randomEventSpecs(r, 1+r.IntN(70))
		fast, err := Compile(seed, specs)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		slow, _ := Compile(seed, specs)
		ex := &mcp.Exchange{Method: "POST", Path: "/mcp", Stream: mcp.StreamPost, SessionSeq: 1, StreamSeq: 1,
			RPCKind: mcp.RPCRequest, RPCMethod: "tools/call", Header: http.Header{}}
		fp, ok := fast.Stream(ex).(*streamPlan)
		if !ok {
			continue
		}
		sp := slow.Stream(ex).(*streamPlan)
		var since time.Duration
		idx := 0
		for n := range 300 {
			if r.IntN(40) == 0 { // now and then the sequence jumps back
				idx, since = r.IntN(idx+1), since/2
			}
			ev := mcp.Event{
				Index: idx, Type: []byte(types[r.IntN(len(types))]), Dispatched: true,
				RPCKind: mcp.RPCKind(r.IntN(5)), RPCMethod: []byte(methods[r.IntN(len(methods))]),
				Priming: r.IntN(10) == 0, SinceStream: since, SinceRun: since,
			}
			if r.IntN(3) == 0 { // runs of the same message, as on a real stream
				ev.Type, ev.RPCKind, ev.RPCMethod = nil, mcp.RPCNotification, []byte(methods[0])
			}
			got := fp.Event(&ev)
			want := naiveEvent(sp, &ev)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d, event %d (%+v):\nprefiltered %+v\nevery fault %+v\nspecs %v", seed, n, ev, got, want, specs)
			}
			idx++
			since += time.Duration(r.IntN(3)) * 100 * time.Millisecond
		}
	}
}

// naiveEvent is streamPlan.Event asking every slot in turn.
func naiveEvent(p *streamPlan, ev *mcp.Event) EventAction {
	if p.ended {
		return EventAction{}
	}
	p.act = EventAction{}
	for i := range p.slots {
		if p.slots[i].f.onEvent != nil {
			p.eventSlot(&p.slots[i], ev, &p.act)
		}
	}
	p.ended = p.act.Close != CloseNone || p.act.Lose > 0
	return p.act
}

// randomEventSpecs is n event faults with random selectors.
func randomEventSpecs(r *rand.Rand, n int) []Spec {
	kinds := []string{"strip-retry", "strip-id", "duplicate", "drop", "corrupt"}
	var out []Spec
	for range n {
		p := map[string]any{}
		if r.IntN(3) == 0 {
			p["rpc_method"] = []string{"notifications/*", "tools/call", "never"}[r.IntN(3)]
		}
		if r.IntN(3) == 0 {
			p["rpc_kind"] = []string{"request", "notification", "response", "error", "none"}[r.IntN(5)]
		}
		if r.IntN(3) == 0 {
			p["event"] = []string{"message", "ping", "p*", "never"}[r.IntN(4)]
		}
		if r.IntN(4) == 0 {
			p["priming"] = r.IntN(2) == 0
		}
		if r.IntN(3) == 0 {
			p["nth"] = int64(r.IntN(40))
		}
		if r.IntN(3) == 0 {
			p["stream_after"] = fmt.Sprintf("%dms", 100*r.IntN(100)) // on the grid the events arrive on
		}
		if r.IntN(4) == 0 {
			p["probability"] = 0.5
		}
		out = append(out, Spec{Kind: kinds[r.IntN(len(kinds))], Params: p})
	}
	return out
}
