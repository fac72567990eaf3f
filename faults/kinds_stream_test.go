package faults_test

import (
	"slices"
	"testing"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/mcp"
)

// sseStream is a POST stream: priming, two notifications, a keep-alive
// comment, the response.
func sseStream() []mcp.Event {
	return []mcp.Event{
		ev(0, priming, at(0)),
		ev(1, withID("1"), at(time.Second)),
		ev(2, withID("2"), at(2*time.Second)),
		ev(3, comment, at(3*time.Second)),
		ev(4, withID("4"), rpc(mcp.RPCResponse, ""), at(4*time.Second)),
	}
}

func TestStreamKinds(t *testing.T) {
	tests := []struct {
		name  string
		spec  faults.Spec
		start faults.StreamAction
		at    int                // event index where the fault fires, -1 for none
		want  faults.EventAction // without Fired
	}{
		{"close after_events", spec("close", "after_events", int64(2)), faults.StreamAction{}, 1, faults.EventAction{Close: faults.CloseAfter}},
		{"close after_events counts matching events", spec("close", "after_events", int64(2), "event", "message", "priming", false), faults.StreamAction{}, 2, faults.EventAction{Close: faults.CloseAfter}},
		{"close after_events 0 at start", spec("close", "after_events", int64(0)), faults.StreamAction{Close: faults.CloseBefore}, -1, faults.EventAction{}},
		{"close after a time", spec("close", "after", "3s"), faults.StreamAction{CloseAfter: 3 * time.Second}, -1, faults.EventAction{}},
		{"close after_priming", spec("close", "after_priming", true), faults.StreamAction{}, 0, faults.EventAction{Close: faults.CloseAfter}},
		{"close before_response", spec("close", "before_response", true), faults.StreamAction{}, 4, faults.EventAction{Close: faults.CloseBefore}},
		{"reset after_events", spec("reset", "after_events", int64(2)), faults.StreamAction{}, 2, faults.EventAction{Close: faults.CloseReset}},
		{"reset after_events 0 at start", spec("reset", "after_events", int64(0)), faults.StreamAction{Close: faults.CloseReset}, -1, faults.EventAction{}},
		{"reset after a time", spec("reset", "after", "1500ms"), faults.StreamAction{}, 2, faults.EventAction{Close: faults.CloseReset}},
		{"reset after_priming", spec("reset", "after_priming", true), faults.StreamAction{}, 1, faults.EventAction{Close: faults.CloseReset}},
		{"reset before_response", spec("reset", "before_response", true), faults.StreamAction{}, 4, faults.EventAction{Close: faults.CloseReset}},
		{"lose", spec("lose", "after_events", int64(2), "events", int64(3)), faults.StreamAction{}, 2, faults.EventAction{Lose: 3}},
		{"lose default", spec("lose"), faults.StreamAction{}, 0, faults.EventAction{Lose: 1}},
		{"stall duration at nth", spec("stall", "duration", "10s", "nth", int64(3)), faults.StreamAction{}, 3, faults.EventAction{Stall: 10 * time.Second}},
		{"stall forever after a time", spec("stall", "forever", true, "stream_after", "2s"), faults.StreamAction{}, 2, faults.EventAction{StallForever: true}},
		{"throttle", spec("throttle", "bytes_per_second", int64(100)), faults.StreamAction{Throttle: 100, ThrottleBurst: 100}, -1, faults.EventAction{}},
		{"throttle burst", spec("throttle", "bytes_per_second", int64(100), "burst", int64(10)), faults.StreamAction{Throttle: 100, ThrottleBurst: 10}, -1, faults.EventAction{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start, acts := drive(compile(t, 1, tt.spec), postEx(), sseStream())
			gotStart := start
			gotStart.Fired = nil
			if !equalStart(gotStart, tt.start) {
				t.Errorf("Start = %+v, want %+v", gotStart, tt.start)
			}
			if !equalStart(tt.start, faults.StreamAction{}) && len(start.Fired) != 1 {
				t.Errorf("Start fired %v, want one firing", start.Fired)
			}
			want := []int(nil)
			if tt.at >= 0 {
				want = []int{tt.at}
			}
			if got := firedAt(acts); !slices.Equal(got, want) {
				t.Fatalf("fired at %v, want %v", got, want)
			}
			if tt.at >= 0 {
				got := acts[tt.at]
				got.Fired = nil
				if !equalEvent(got, tt.want) {
					t.Errorf("action = %+v, want %+v", got, tt.want)
				}
			}
		})
	}
}

func equalStart(a, b faults.StreamAction) bool {
	return a.CloseAfter == b.CloseAfter && a.Throttle == b.Throttle && a.ThrottleBurst == b.ThrottleBurst && a.Close == b.Close
}

func equalEvent(a, b faults.EventAction) bool {
	return a.Drop == b.Drop && a.Delay == b.Delay && a.Duplicate == b.Duplicate &&
		a.StripRetry == b.StripRetry && a.StripID == b.StripID && a.SetRetry == b.SetRetry &&
		a.HasSetRetry == b.HasSetRetry && string(a.RewriteID) == string(b.RewriteID) &&
		a.Corrupt == b.Corrupt && a.Fragment == b.Fragment && a.Noise == b.Noise &&
		a.Stall == b.Stall && a.StallForever == b.StallForever && a.Lose == b.Lose && a.Close == b.Close
}

func TestPerEventStreamKinds(t *testing.T) {
	set := compile(t, 1,
		spec("fragment", "max_piece", int64(7), "priming", false),
		spec("keepalive-noise", "lines", int64(2), "event", "message"),
	)
	_, acts := drive(set, postEx(), sseStream())
	for i, a := range acts {
		wantFrag := 0
		if i != 0 {
			wantFrag = 7
		}
		if a.Fragment != wantFrag || a.Noise != 2 {
			t.Errorf("event %d: Fragment %d Noise %d, want %d and 2", i, a.Fragment, a.Noise, wantFrag)
		}
	}
}

func TestNothingAfterTheStreamEnds(t *testing.T) {
	set := compile(t, 1, spec("close", "after_events", int64(1)), spec("drop"))
	_, acts := drive(set, postEx(), sseStream())
	if len(acts[0].Fired) != 2 || acts[0].Close != faults.CloseAfter {
		t.Fatalf("event 0: %+v, want close and drop", acts[0])
	}
	for i := 1; i < len(acts); i++ {
		if len(acts[i].Fired) != 0 {
			t.Errorf("event %d after the close: %+v", i, acts[i])
		}
	}
}

func TestStreamKindsFireOncePerStream(t *testing.T) {
	set := compile(t, 1, spec("stall", "duration", "1s"))
	_, acts := drive(set, postEx(), sseStream())
	if got := firedAt(acts); !slices.Equal(got, []int{0}) {
		t.Errorf("stall fired at %v, want [0]", got)
	}
}
