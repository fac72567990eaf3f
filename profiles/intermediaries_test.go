package profiles_test

import (
	"testing"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy/mcp"
)

// builtinPlan is the plan of the built-in profile name, with its own seed.
func builtinPlan(t *testing.T, name string) faults.Plan {
	t.Helper()
	p, err := profiles.Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	set, err := p.Plan(p.Seed)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestIdleCutsArmEveryStream: the idle cutters arm their timeout on every
// kind of stream, and decide nothing at events.
func TestIdleCutsArmEveryStream(t *testing.T) {
	for name, want := range map[string]time.Duration{"idle-cut-125s": 125 * time.Second, "idle-cut-300s": 300 * time.Second} {
		set := builtinPlan(t, name)
		for i, ex := range []*mcp.Exchange{exchange(mcp.StreamPost, 1, "tools/call"), exchange(mcp.StreamGet, 2, ""), exchange(mcp.StreamResume, 3, "")} {
			sp := set.Stream(ex)
			if got := sp.Start().CloseIdle; got != want {
				t.Errorf("%s: stream %d (%v) idles out after %v, want %v", name, i, ex.Stream, got, want)
			}
			for _, ev := range answer() {
				if a := sp.Event(&ev); len(a.Fired) > 0 {
					t.Errorf("%s: event %d: %+v", name, ev.Index, a)
				}
			}
		}
	}
}

// TestBufferingProxyHoldsUntil4KiB: on a POST answer stream, small events
// are held until 4096 bytes have gathered; other streams pass.
func TestBufferingProxyHoldsUntil4KiB(t *testing.T) {
	set := builtinPlan(t, "buffering-proxy")
	for _, ex := range []*mcp.Exchange{exchange(mcp.StreamGet, 1, ""), exchange(mcp.StreamResume, 2, "")} {
		sp := set.Stream(ex)
		sp.Start()
		for _, ev := range answer() {
			if sp.Event(&ev).Buffer {
				t.Fatalf("%v stream: event %d held", ex.Stream, ev.Index)
			}
		}
	}
	sp := set.Stream(exchange(mcp.StreamPost, 3, "tools/call"))
	sp.Start()
	var released []int
	for i := range 100 {
		ev := mcp.Event{Index: i, Raw: make([]byte, 100), Dispatched: true, RPCKind: mcp.RPCNotification}
		if !sp.Event(&ev).Buffer {
			released = append(released, i)
		}
	}
	if len(released) != 2 || released[0] != 40 || released[1] != 81 {
		t.Errorf("released at events %v, want 40 and 81 (every 4096 bytes of 100-byte events)", released)
	}
}

// TestCutsFINAndRST: cut-fin ends each tools/call stream cleanly after its
// priming event, cut-rst aborts it at the next event, and neither touches
// another stream.
func TestCutsFINAndRST(t *testing.T) {
	for name, want := range map[string]struct {
		at   int
		mode faults.CloseMode
	}{"cut-fin": {0, faults.CloseAfter}, "cut-rst": {1, faults.CloseReset}} {
		set := builtinPlan(t, name)
		for seq := 1; seq <= 5; seq++ {
			at, act := closedAt(set, exchange(mcp.StreamPost, seq, "tools/call"), answer())
			if at != want.at || act.Close != want.mode {
				t.Errorf("%s: stream %d cut at %d (%v), want at %d (%v)", name, seq, at, act.Close, want.at, want.mode)
			}
		}
		if at, _ := closedAt(set, exchange(mcp.StreamResume, 9, ""), answer()); at != -1 {
			t.Errorf("%s: a resumption was cut at %d", name, at)
		}
	}
}

// TestGatewayErrorsCarryRetryAfter: over many reconnections each of the
// four statuses is answered, always with Retry-After, and a POST never.
func TestGatewayErrorsCarryRetryAfter(t *testing.T) {
	set := builtinPlan(t, "gateway-errors")
	seen := map[int]string{}
	for seq := 1; seq <= 400; seq++ {
		for _, st := range []mcp.StreamType{mcp.StreamResume, mcp.StreamGet} {
			a := set.Exchange(exchange(st, seq, ""))
			if a.Status == 0 {
				continue
			}
			if a.Header.Get("Retry-After") == "" {
				t.Errorf("status %d without Retry-After", a.Status)
			}
			seen[a.Status] = a.Header.Get("Retry-After")
		}
		if a := set.Exchange(exchange(mcp.StreamPost, seq, "tools/call")); a.Status != 0 {
			t.Fatalf("a tools/call POST was answered %d", a.Status)
		}
	}
	want := map[int]string{429: "2", 502: "1", 503: "2", 504: "1"}
	for code, ra := range want {
		if seen[code] != ra {
			t.Errorf("status %d: Retry-After %q, want %q (all seen: %v)", code, seen[code], ra, seen)
		}
	}
}
