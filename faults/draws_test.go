package faults_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/mcp"
)

// calls are n tools/call exchanges of session 1, ids 1..n.
func calls(n int) []*mcp.Exchange {
	out := make([]*mcp.Exchange, n)
	for i := range out {
		ex := postEx()
		ex.RPCID = fmt.Sprint(i + 1)
		out[i] = ex
	}
	return out
}

// loses reports, for each exchange, whether the lose fault of s acted on
// its stream of three events.
func loses(s *faults.Set, exs []*mcp.Exchange) []bool {
	out := make([]bool, len(exs))
	for i, ex := range exs {
		_, acts := drive(s, ex, []mcp.Event{ev(0), ev(1), ev(2)})
		for _, a := range acts {
			out[i] = out[i] || a.Lose > 0
		}
	}
	return out
}

// seedSkipping returns a seed at which a lose of probability 0.5 skips
// the first of exs.
func seedSkipping(t *testing.T, exs []*mcp.Exchange) uint64 {
	t.Helper()
	for seed := uint64(1); seed < 1000; seed++ {
		s := compile(t, seed, spec("lose", "after_events", int64(1), "probability", 0.5))
		if !loses(s, exs[:1])[0] {
			return seed
		}
	}
	t.Fatal("no seed skips the first stream")
	return 0
}

// TestFirstActsOnTheFirstOpportunity: with first = true, a fault that its
// draw would skip acts on the first stream it can act on, then at its
// probability, drawn as without first.
func TestFirstActsOnTheFirstOpportunity(t *testing.T) {
	exs := calls(8)
	seed := seedSkipping(t, exs)
	plain := loses(compile(t, seed, spec("lose", "after_events", int64(1), "probability", 0.5)), exs)
	first := loses(compile(t, seed, spec("lose", "after_events", int64(1), "probability", 0.5, "first", true)), exs)
	if plain[0] || !first[0] {
		t.Fatalf("first stream: lost %v without first, %v with; want false, true", plain[0], first[0])
	}
	if !slices.Equal(plain[1:], first[1:]) {
		t.Errorf("after the first firing: %v with first, %v without; want the same draws", first[1:], plain[1:])
	}
}

// TestFirstWithoutProbability: first on a certain fault changes nothing
// (a profile that pins its faults, as shrink writes them, may keep it).
func TestFirstWithoutProbability(t *testing.T) {
	exs := calls(3)
	got := loses(compile(t, 1, spec("lose", "after_events", int64(1), "first", true)), exs)
	if !slices.Equal(got, []bool{true, true, true}) {
		t.Errorf("lost %v, want every stream", got)
	}
}

// TestSkipsAreCountedAndLogged: each draw that skips a fault is counted
// in Stats and passed to the OnSkip hook with the traffic it matched.
func TestSkipsAreCountedAndLogged(t *testing.T) {
	exs := calls(8)
	s := compile(t, 42, spec("lose", "after_events", int64(1), "probability", 0.5))
	var mu sync.Mutex
	var skips []faults.Skip
	s.OnSkip(func(k faults.Skip) { mu.Lock(); skips = append(skips, k); mu.Unlock() })
	lost := loses(s, exs)
	n := 0
	for _, l := range lost {
		if !l {
			n++
		}
	}
	st := s.Stats()[0]
	if st.Drawn != 8 || st.Skipped != int64(n) || len(skips) != n {
		t.Fatalf("drawn %d, skipped %d, %d logged; want 8, %d, %d", st.Drawn, st.Skipped, len(skips), n, n)
	}
	for _, k := range skips {
		if k.Index != 0 || k.Kind != "lose" || k.Probability != 0.5 || k.Seed != 42 || k.Traffic.RPCMethod != "tools/call" || k.Traffic.Stream != mcp.StreamPost {
			t.Errorf("skip %+v", k)
		}
	}
}

// TestFiringSeedFires: the seed FiringSeed offers, found by drawing the
// skipped decisions again, fires the fault on every stream the Set's own
// seed skipped.
func TestFiringSeedFires(t *testing.T) {
	exs := calls(3)
	lose := spec("lose", "after_events", int64(1), "probability", 0.5)
	s := compile(t, 42, lose)
	before := loses(s, exs)
	seed, fired, skipped, ok := s.FiringSeed(0)
	if !ok || fired != skipped {
		t.Fatalf("FiringSeed: %d, %d of %d, %v", seed, fired, skipped, ok)
	}
	after := loses(compile(t, seed, lose), exs)
	for i := range exs {
		if !before[i] && !after[i] {
			t.Errorf("stream %d: skipped at seed 42 and at seed %d", i, seed)
		}
	}
	if _, _, _, ok := compile(t, 42, spec("lose")).FiringSeed(0); ok {
		t.Error("a certain fault has no skipped draw to redraw")
	}
}

// TestNeeds: what each fault exists to exercise, from its traits and
// selectors; decorative faults need nothing.
func TestNeeds(t *testing.T) {
	s := compile(t, 1,
		spec("latency", "delay", "10ms"),
		spec("lose", "stream", "post"),
		spec("close", "stream", "get", "after_events", int64(1)),
		spec("reset", "after_priming", true),
		spec("status", "status", int64(404)),
		spec("status", "stream", "resume", "status", int64(503)),
		spec("status", "stream", "post", "status", int64(503)),
		spec("keepalive-noise"),
	)
	want := []faults.Need{
		{Fault: 1, Kind: "lose", Any: []string{faults.ExercisesCut}},
		{Fault: 2, Kind: "close", Any: []string{faults.ExercisesReconnect}},
		{Fault: 3, Kind: "reset", Any: []string{faults.ExercisesCut, faults.ExercisesReconnect}},
		{Fault: 4, Kind: "status", Any: []string{faults.ExercisesNewSession}},
		{Fault: 5, Kind: "status", Any: []string{faults.ExercisesRetry}},
	}
	got := s.Needs()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Needs:\n got %v\nwant %v", got, want)
	}
}
