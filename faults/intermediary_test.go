package faults_test

import (
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/mcp"
)

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
