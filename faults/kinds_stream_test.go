package faults_test

import (
	"errors"
	"net/http"
	"reflect"
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
		{"stall fires once per stream", spec("stall", "duration", "1s"), faults.StreamAction{}, 0, faults.EventAction{Stall: time.Second}},
		{"stall forever after a time", spec("stall", "forever", true, "stream_after", "2s"), faults.StreamAction{}, 2, faults.EventAction{StallForever: true}},
		{"throttle", spec("throttle", "bytes_per_second", int64(100)), faults.StreamAction{Throttle: 100, ThrottleBurst: 100}, -1, faults.EventAction{}},
		{"throttle burst", spec("throttle", "bytes_per_second", int64(100), "burst", int64(10)), faults.StreamAction{Throttle: 100, ThrottleBurst: 10}, -1, faults.EventAction{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start, acts := drive(compile(t, 1, tt.spec), postEx(), sseStream())
			gotStart := start
			gotStart.Fired = nil
			if !reflect.DeepEqual(gotStart, tt.start) {
				t.Errorf("Start = %+v, want %+v", gotStart, tt.start)
			}
			if !reflect.DeepEqual(tt.start, faults.StreamAction{}) && len(start.Fired) != 1 {
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
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("action = %+v, want %+v", got, tt.want)
				}
			}
		})
	}
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

// heldAt lists the indexes of events whose action holds them back.
func heldAt(acts []faults.EventAction) []int {
	var out []int
	for i, a := range acts {
		if a.Buffer {
			out = append(out, i)
		}
	}
	return out
}

func sized(n int) evOpt { return func(e *mcp.Event) { e.Raw = make([]byte, n) } }

// TestBufferReleasesInBursts: the buffer holds events until its count or
// size is reached; the event that reaches it is not held (it goes out
// with the held ones), and the count starts again.
func TestBufferReleasesInBursts(t *testing.T) {
	seven := make([]mcp.Event, 7)
	for i := range seven {
		seven[i] = ev(i, sized(100))
	}
	for _, tc := range []struct {
		name string
		spec faults.Spec
		evs  []mcp.Event
		held []int
	}{
		{"every 3 events", spec("buffer", "events", int64(3)), seven, []int{0, 1, 3, 4, 6}},
		{"every 2 events", spec("buffer", "events", int64(2)), seven, []int{0, 2, 4, 6}},
		{"250 bytes", spec("buffer", "bytes", int64(250)), seven, []int{0, 1, 3, 4, 6}},
		{"a byte: nothing held", spec("buffer", "bytes", int64(1)), seven, nil},
		{"sizes differ", spec("buffer", "bytes", int64(250)),
			[]mcp.Event{ev(0, sized(300)), ev(1, sized(10)), ev(2, sized(10)), ev(3, sized(240)), ev(4, sized(10))}, []int{1, 2, 4}},
		{"only what the selector matches", spec("buffer", "events", int64(3), "priming", false),
			[]mcp.Event{ev(0, priming), ev(1), ev(2), ev(3, rpc(mcp.RPCResponse, ""))}, []int{1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, acts := drive(compile(t, 1, tc.spec), postEx(), tc.evs)
			if got := heldAt(acts); !slices.Equal(got, tc.held) {
				t.Errorf("held %v, want %v", got, tc.held)
			}
		})
	}
}

// TestBufferHonoursNoBuffering: a stream whose response asks for no
// buffering (X-Accel-Buffering: no, as nginx reads it) is left alone,
// unless the fault is told to buffer it all the same.
func TestBufferHonoursNoBuffering(t *testing.T) {
	four := []mcp.Event{ev(0), ev(1), ev(2), ev(3)}
	for _, tc := range []struct {
		name   string
		spec   faults.Spec
		header string
		held   []int
	}{
		{"no header: buffered", spec("buffer", "events", int64(2)), "", []int{0, 2}},
		{"asked not to: left alone", spec("buffer", "events", int64(2)), "no", nil},
		{"asked not to, any case and spaces", spec("buffer", "events", int64(2)), " No ", nil},
		{"asked to buffer: buffered", spec("buffer", "events", int64(2)), "yes", []int{0, 2}},
		{"told not to honour it", spec("buffer", "events", int64(2), "honour_no_buffering", false), "no", []int{0, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex := postEx()
			ex.Response = http.Header{}
			if tc.header != "" {
				ex.Response.Set("X-Accel-Buffering", tc.header)
			}
			_, acts := drive(compile(t, 1, tc.spec), ex, four)
			if got := heldAt(acts); !slices.Equal(got, tc.held) {
				t.Errorf("held %v, want %v", got, tc.held)
			}
		})
	}
}

func TestIntermediaryKindsRejectBadParameters(t *testing.T) {
	for _, s := range []faults.Spec{
		spec("buffer"),
		spec("buffer", "events", int64(3), "bytes", int64(10)),
		spec("buffer", "events", int64(1)),
		spec("buffer", "events", int64(3), "honour_no_buffering", "yes"),
		spec("idle-close"),
		spec("idle-close", "silence", "0s"),
	} {
		if _, err := faults.Compile(1, []faults.Spec{s}); !errors.Is(err, faults.ErrRange) && !errors.Is(err, faults.ErrMissing) && !errors.Is(err, faults.ErrConflict) && !errors.Is(err, faults.ErrType) {
			t.Errorf("%v: %v, want a parameter error", s.Params, err)
		}
	}
}

// TestIdleCloseArmsTheShortestSilence: the stream's start carries the
// silence; of two idle closes, the first to time out wins.
func TestIdleCloseArmsTheShortestSilence(t *testing.T) {
	start, acts := drive(compile(t, 1, spec("idle-close", "silence", "300s"), spec("idle-close", "silence", "125s")), postEx(), sseStream())
	if start.CloseIdle != 125*time.Second || len(start.Fired) != 2 {
		t.Errorf("start %+v, want CloseIdle 125s fired by both", start)
	}
	if got := firedAt(acts); got != nil {
		t.Errorf("fired at events %v; an idle close decides at the start only", got)
	}
}

// TestIdleExpired: the timer closes once the silence is whole, and
// otherwise waits what is left of it since the last read.
func TestIdleExpired(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, tc := range []struct {
		name      string
		last, now time.Duration
		want      time.Duration
	}{
		{"silent since the start", 0, 125 * time.Second, 0},
		{"longer still", 0, 200 * time.Second, 0},
		{"a read 25s in", 25 * time.Second, 125 * time.Second, 25 * time.Second},
		{"a read just now", 125 * time.Second, 125 * time.Second, 125 * time.Second},
	} {
		if got := faults.IdleExpired(125*time.Second, t0.Add(tc.last), t0.Add(tc.now)); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
