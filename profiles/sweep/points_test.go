package sweep

import (
	"bytes"
	"strings"
	"testing"

	"github.com/frayproxy/fray/profiles"
)

var (
	// call is a tools/call stream: priming, three progress events, the
	// response.
	call = Stream{Kind: KindPost, Method: "tools/call", Name: "slow-count", Events: 5, Primed: true, Response: 5}
	// bare is a stream with the response alone.
	bare = Stream{Kind: KindPost, Method: "tools/list", Events: 1, Response: 1}
	// get is a standalone GET stream with two events.
	get = Stream{Kind: KindGet, Events: 2, Primed: true}
	// resumed is the first resumption of a call.
	resumed = Stream{Kind: KindResume, Method: "tools/call", Name: "slow-count", Seq: 1, Events: 3, Response: 3}
)

func TestPoints(t *testing.T) {
	for _, tt := range []struct {
		name      string
		s         Stream
		maxEvents int
		want      []string
	}{
		{"every place", call, 10, []string{"before any event", "after the priming event", "after event 2", "after event 3", "before the response", "after the response"}},
		{"max-events bounds the events between", call, 2, []string{"before any event", "after the priming event", "after event 2", "before the response", "after the response"}},
		{"max-events 0", call, 0, []string{"before any event", "after the priming event", "before the response", "after the response"}},
		{"a response alone: before it is before any event", bare, 3, []string{"before any event", "after the response"}},
		{"a GET stream has no response", get, 3, []string{"before any event", "after the priming event", "after event 2"}},
		{"an unprimed resumption", resumed, 3, []string{"before any event", "after event 1", "before the response", "after the response"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, p := range Points(tt.s, tt.maxEvents) {
				got = append(got, p.Where())
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("points\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestApplies(t *testing.T) {
	pts := Points(call, 10)
	for _, tt := range []struct {
		p    Point
		m    Mode
		want bool
	}{
		{pts[0], Close, true},
		{pts[0], Reset, true},
		{pts[0], Lose, true},
		{pts[0], ResumeError, false}, // no event id reached the client
		{pts[1], ResumeError, true},
		{pts[4], Lose, true},  // loses the response
		{pts[5], Close, true}, // after the response
		{pts[5], Reset, false},
		{pts[5], Lose, false},
		{pts[5], ResumeError, false},
		{Points(get, 3)[2], Reset, false}, // after the last event seen
		{Points(get, 3)[2], Close, true},
	} {
		if got := Applies(tt.p, tt.m); got != tt.want {
			t.Errorf("Applies(%s, %s) = %v, want %v", tt.p, tt.m, got, tt.want)
		}
	}
}

func TestPlan(t *testing.T) {
	cells, left := Plan([]Stream{call, get}, 10, 1000)
	// call: 6 points; close everywhere (6), reset and lose at the 5
	// before the response's end (10), resume-503 at 4; get: 3 points,
	// close 3, reset and lose 2 each, resume-503 2.
	if want := 6 + 10 + 4 + 3 + 4 + 2; len(cells) != want || left != 0 {
		t.Fatalf("Plan: %d cells, %d left; want %d, 0", len(cells), left, want)
	}
	if cells[0].Point.Place != Start || cells[0].Mode != Close || cells[1].Mode != Reset {
		t.Errorf("Plan is not point by point, mode by mode: %v, %v", cells[0], cells[1])
	}
	few, left := Plan([]Stream{call, get}, 10, 5)
	if len(few) != 5 || left != len(cells)-5 || few[4] != cells[4] {
		t.Errorf("Plan with max-runs 5: %d cells, %d left", len(few), left)
	}
	if c, l := Plan(nil, 3, 10); len(c) != 0 || l != 0 {
		t.Errorf("Plan of no streams: %v, %d", c, l)
	}
}

func TestCellProfiles(t *testing.T) {
	cells, _ := Plan([]Stream{call, get, resumed}, 10, 1000)
	for _, tt := range []struct {
		cell Cell
		want []string
	}{
		{Cell{Points(call, 10)[0], Close}, []string{`kind = 'close'`, `stream = 'post'`, `request_method = 'tools/call'`, `request_name = 'slow-count'`, `times = 1`, `after_events = 0`}},
		{Cell{Points(call, 10)[1], Reset}, []string{`kind = 'reset'`, `after_priming = true`}},
		{Cell{Points(call, 10)[1], Lose}, []string{`kind = 'lose'`, `after_events = 1`}},
		{Cell{Points(call, 10)[4], Close}, []string{`before_response = true`}},
		{Cell{Points(call, 10)[4], Lose}, []string{`kind = 'lose'`, `after_events = 4`}},
		{Cell{Points(call, 10)[2], ResumeError}, []string{`kind = 'close'`, `after_events = 2`, `kind = 'status'`, `stream = 'resume'`, `status = 503`}},
		{Cell{Points(get, 10)[0], Close}, []string{`stream = 'get'`, `after_events = 0`}},
		{Cell{Points(resumed, 10)[0], ResumeError}, []string{`stream = 'resume'`, `stream_seq = 1`, `stream_seq = 2`}},
	} {
		text, err := tt.cell.Profile()
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tt.want {
			if !strings.Contains(string(text), w) {
				t.Errorf("%s: profile lacks %s:\n%s", tt.cell, w, text)
			}
		}
		if tt.cell.Point.Stream.Kind != KindPost && strings.Contains(string(text), "request_method") {
			t.Errorf("%s: a GET carries no method, yet:\n%s", tt.cell, text)
		}
	}
	// Every cell's profile is one fray loads and compiles.
	for _, c := range cells {
		text, err := c.Profile()
		if err != nil {
			t.Fatal(err)
		}
		p, err := profiles.Parse(c.Name()+".toml", bytes.NewReader(text))
		if err != nil {
			t.Fatalf("%s: %v\n%s", c, err, text)
		}
		if _, err := profiles.NewActive(p, nil); err != nil {
			t.Errorf("%s: %v", c, err)
		}
	}
}
