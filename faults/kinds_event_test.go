package faults_test

import (
	"slices"
	"testing"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/mcp"
)

func TestEventKinds(t *testing.T) {
	stream := []mcp.Event{
		ev(0, priming, withRetry),
		ev(1, withID("1"), rpc(mcp.RPCNotification, "notifications/progress")),
		ev(2, comment),
		ev(3, withID("3"), rpc(mcp.RPCResponse, "")),
	}
	tests := []struct {
		name  string
		spec  faults.Spec
		fired []int
		check func(t *testing.T, acts []faults.EventAction)
	}{
		{"drop", spec("drop"), []int{0, 1, 2, 3}, func(t *testing.T, a []faults.EventAction) {
			for i := range a {
				if !a[i].Drop {
					t.Errorf("event %d not dropped", i)
				}
			}
		}},
		{"delay", spec("delay", "delay", "250ms"), []int{0, 1, 2, 3}, func(t *testing.T, a []faults.EventAction) {
			if a[1].Delay != 250*time.Millisecond {
				t.Errorf("Delay = %v, want 250ms", a[1].Delay)
			}
		}},
		{"duplicate default", spec("duplicate", "rpc_kind", "response"), []int{3}, func(t *testing.T, a []faults.EventAction) {
			if a[3].Duplicate != 1 {
				t.Errorf("Duplicate = %d, want 1", a[3].Duplicate)
			}
		}},
		{"duplicate copies", spec("duplicate", "copies", int64(3), "nth", int64(1)), []int{1}, func(t *testing.T, a []faults.EventAction) {
			if a[1].Duplicate != 3 {
				t.Errorf("Duplicate = %d, want 3", a[1].Duplicate)
			}
		}},
		{"strip-retry only where retry is", spec("strip-retry"), []int{0}, func(t *testing.T, a []faults.EventAction) {
			if !a[0].StripRetry || a[1].StripRetry {
				t.Errorf("StripRetry = %v, %v", a[0].StripRetry, a[1].StripRetry)
			}
		}},
		{"set-retry on priming", spec("set-retry", "retry", "1.5s", "priming", true), []int{0}, func(t *testing.T, a []faults.EventAction) {
			if !a[0].HasSetRetry || a[0].SetRetry != 1500 {
				t.Errorf("SetRetry = %d, %v; want 1500, true", a[0].SetRetry, a[0].HasSetRetry)
			}
		}},
		{"strip-id only where an id is", spec("strip-id"), []int{0, 1, 3}, func(t *testing.T, a []faults.EventAction) {
			if !a[1].StripID {
				t.Error("StripID not set")
			}
		}},
		{"rewrite-id template", spec("rewrite-id", "id", "{id}-x"), []int{0, 1, 3}, func(t *testing.T, a []faults.EventAction) {
			if string(a[1].RewriteID) != "1-x" || string(a[0].RewriteID) != "p-x" {
				t.Errorf("RewriteID = %q, %q", a[0].RewriteID, a[1].RewriteID)
			}
		}},
		{"rewrite-id fixed", spec("rewrite-id", "id", "stale"), []int{0, 1, 3}, func(t *testing.T, a []faults.EventAction) {
			if string(a[3].RewriteID) != "stale" {
				t.Errorf("RewriteID = %q", a[3].RewriteID)
			}
		}},
		{"drop-priming", spec("drop-priming"), []int{0}, func(t *testing.T, a []faults.EventAction) {
			if !a[0].Drop || a[1].Drop {
				t.Errorf("Drop = %v, %v", a[0].Drop, a[1].Drop)
			}
		}},
		{"corrupt only JSON-RPC data", spec("corrupt"), []int{1, 3}, func(t *testing.T, a []faults.EventAction) {
			if !a[1].Corrupt || a[2].Corrupt {
				t.Errorf("Corrupt = %v, %v", a[1].Corrupt, a[2].Corrupt)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := compile(t, 1, tt.spec)
			_, acts := drive(set, postEx(), slices.Clone(stream))
			if got := firedAt(acts); !slices.Equal(got, tt.fired) {
				t.Fatalf("fired at %v, want %v", got, tt.fired)
			}
			for _, i := range tt.fired {
				if f := acts[i].Fired[0]; f.Index != 0 || f.Kind != tt.spec.Kind {
					t.Errorf("Firing = %+v, want index 0 kind %s", f, tt.spec.Kind)
				}
			}
			tt.check(t, acts)
		})
	}
}

func TestDelayJitterStaysInRangeAndRepeats(t *testing.T) {
	sp := spec("delay", "delay", "100ms", "jitter", "50ms")
	evs := make([]mcp.Event, 200)
	for i := range evs {
		evs[i] = ev(i)
	}
	_, a := drive(compile(t, 9, sp), postEx(), evs)
	_, b := drive(compile(t, 9, sp), postEx(), evs)
	varied := false
	for i := range a {
		d := a[i].Delay
		if d < 100*time.Millisecond || d > 150*time.Millisecond {
			t.Fatalf("event %d: Delay %v outside [100ms, 150ms]", i, d)
		}
		if d != b[i].Delay {
			t.Fatalf("event %d: Delay %v then %v with the same seed", i, d, b[i].Delay)
		}
		varied = varied || d != a[0].Delay
	}
	if !varied {
		t.Error("jitter never changed the delay")
	}
}

func TestFaultsCombine(t *testing.T) {
	set := compile(t, 1,
		spec("delay", "delay", "1s"),
		spec("delay", "delay", "2s"),
		spec("rewrite-id", "id", "first"),
		spec("rewrite-id", "id", "second"),
		spec("fragment", "max_piece", int64(10)),
		spec("fragment", "max_piece", int64(4)),
	)
	_, acts := drive(set, postEx(), []mcp.Event{ev(0, withID("a"))})
	a := acts[0]
	if a.Delay != 3*time.Second || string(a.RewriteID) != "first" || a.Fragment != 4 || len(a.Fired) != 6 {
		t.Errorf("got Delay %v RewriteID %q Fragment %d fired %d; want 3s, first, 4, 6", a.Delay, a.RewriteID, a.Fragment, len(a.Fired))
	}
}
