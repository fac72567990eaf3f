package faults_test

import (
	"reflect"
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
		// want is the action at every fired event, without Fired; the
		// others are left alone. check, when set, replaces it.
		want  faults.EventAction
		check func(t *testing.T, acts []faults.EventAction)
	}{
		{name: "drop", spec: spec("drop"), fired: []int{0, 1, 2, 3}, want: faults.EventAction{Drop: true}},
		{name: "delay", spec: spec("delay", "delay", "250ms"), fired: []int{0, 1, 2, 3},
			want: faults.EventAction{Delay: 250 * time.Millisecond}},
		{name: "duplicate default", spec: spec("duplicate", "rpc_kind", "response"), fired: []int{3},
			want: faults.EventAction{Duplicate: 1}},
		{name: "duplicate copies", spec: spec("duplicate", "copies", int64(3), "nth", int64(1)), fired: []int{1},
			want: faults.EventAction{Duplicate: 3}},
		{name: "strip-retry only where retry is", spec: spec("strip-retry"), fired: []int{0},
			want: faults.EventAction{StripRetry: true}},
		{name: "set-retry on priming", spec: spec("set-retry", "retry", "1.5s", "priming", true), fired: []int{0},
			want: faults.EventAction{SetRetry: 1500, HasSetRetry: true}},
		{name: "strip-id only where an id is", spec: spec("strip-id"), fired: []int{0, 1, 3},
			want: faults.EventAction{StripID: true}},
		{name: "rewrite-id template", spec: spec("rewrite-id", "id", "{id}-x"), fired: []int{0, 1, 3},
			check: func(t *testing.T, a []faults.EventAction) {
				if string(a[1].RewriteID) != "1-x" || string(a[0].RewriteID) != "p-x" {
					t.Errorf("RewriteID = %q, %q", a[0].RewriteID, a[1].RewriteID)
				}
			}},
		{name: "rewrite-id fixed", spec: spec("rewrite-id", "id", "stale"), fired: []int{0, 1, 3},
			want: faults.EventAction{RewriteID: []byte("stale")}},
		{name: "drop-priming", spec: spec("drop-priming"), fired: []int{0}, want: faults.EventAction{Drop: true}},
		{name: "corrupt only JSON-RPC data", spec: spec("corrupt"), fired: []int{1, 3},
			want: faults.EventAction{Corrupt: true}},
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
			if tt.check != nil {
				tt.check(t, acts)
				return
			}
			for i, a := range acts {
				want := faults.EventAction{}
				if slices.Contains(tt.fired, i) {
					want = tt.want
				}
				a.Fired = nil
				if !reflect.DeepEqual(a, want) {
					t.Errorf("event %d: action %+v, want %+v", i, a, want)
				}
			}
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
