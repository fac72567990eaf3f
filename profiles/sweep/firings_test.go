package sweep

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// request is the observation of a request on exchange ex.
func request(ex uint64, st mcp.StreamType, session int, msgs ...observe.Message) *observe.Observation {
	return &observe.Observation{Kind: observe.KindRequest, Exchange: ex, Stream: st, SessionSeq: session, Request: &observe.Request{Messages: msgs}}
}

func fired(o *observe.Observation, index int, kind string) *observe.Observation {
	o.Fired = append(o.Fired, faults.Firing{Index: index, Kind: kind})
	return o
}

func event(ex uint64, index int) *observe.Observation {
	return &observe.Observation{Kind: observe.KindEvent, Exchange: ex, Event: &observe.Event{Event: mcp.Event{Index: index, Parsed: true}}}
}

var toolCall = observe.Message{Kind: mcp.RPCRequest, Method: "tools/call", Name: "slow-count", HasName: true}

func resumeReq(ex uint64, session int, lastID string) *observe.Observation {
	return &observe.Observation{Kind: observe.KindRequest, Exchange: ex, Stream: mcp.StreamResume, SessionSeq: session,
		Request: &observe.Request{LastEventID: lastID, HasLastEventID: true}}
}

func withID(o *observe.Observation, id string) *observe.Observation {
	o.Event.ID, o.Event.HasID = []byte(id), true
	return o
}

func cut(o *observe.Observation, index int, kind string) *observe.Observation {
	o.Fired = append(o.Fired, faults.Firing{Index: index, Kind: kind, Traits: faults.EndsStream})
	return o
}

func refused(o *observe.Observation, index int) *observe.Observation {
	o.Fired = append(o.Fired, faults.Firing{Index: index, Kind: "status", Traits: faults.AnswersRequests})
	return o
}

// flakyRun is a recorded run: call 1 reset (firing 1) and resumed (resume
// 0); call 2 closed by the server itself and resumed (resume 1); call 3
// reset (firing 2), its resumption refused (firing 3, resume 2) and
// resumed again (resume 3), with an event dropped there (firings 4, 5).
func flakyRun() []*observe.Observation {
	return []*observe.Observation{
		request(1, mcp.StreamPost, 0, observe.Message{Kind: mcp.RPCRequest, Method: "initialize"}), end(1),
		request(2, mcp.StreamGet, 1),
		refused(&observe.Observation{Kind: observe.KindResponse, Exchange: 2, Response: &observe.Response{Status: 502}}, 1), end(2),
		request(3, mcp.StreamPost, 1, toolCall), withID(event(3, 0), "a1"), cut(event(3, 1), 2, "reset"), end(3),
		resumeReq(4, 1, "a1"), withID(event(4, 0), "a2"), end(4),
		request(5, mcp.StreamPost, 1, toolCall), withID(event(5, 0), "b1"), end(5),
		resumeReq(6, 1, "b1"), withID(event(6, 0), "b2"), end(6),
		request(7, mcp.StreamPost, 1, toolCall), withID(event(7, 0), "c1"), cut(event(7, 1), 2, "reset"), end(7),
		resumeReq(8, 1, "c1"),
		refused(&observe.Observation{Kind: observe.KindResponse, Exchange: 8, Response: &observe.Response{Status: 503}}, 0), end(8),
		resumeReq(9, 1, "c1"), fired(event(9, 3), 3, "drop"), fired(event(9, 3), 3, "drop"), fired(event(9, 4), 3, "drop"), end(9),
	}
}

func TestRecorder(t *testing.T) {
	var r Recorder
	for _, o := range flakyRun() {
		r.Observe(o)
	}
	run := r.Run()
	want := []string{
		"fault 1 (status) on get #1",
		"fault 2 (reset) on post #1 tools/call slow-count",
		"fault 2 (reset) on post #3 tools/call slow-count",
		"fault 0 (status) on resume #3",
		"fault 3 (drop) on resume #4 at event 3",
		"fault 3 (drop) on resume #4 at event 4",
	}
	var got []string
	for _, f := range run.Firings {
		got = append(got, f.String())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("firings\n got %q\nwant %q", got, want)
	}
	wantResumes := []Resumption{{1, 1}, {1, -1}, {1, 2}, {1, 3}}
	if !slices.Equal(run.Resumes, wantResumes) {
		t.Errorf("resumptions %v, want %v", run.Resumes, wantResumes)
	}
}

func TestResumeSeqs(t *testing.T) {
	var r Recorder
	for _, o := range flakyRun() {
		r.Observe(o)
	}
	run := r.Run()
	for _, tt := range []struct {
		name   string
		subset []int
		want   []int
	}{
		{"every firing: as recorded", []int{0, 1, 2, 3, 4, 5}, []int{1, 2, 3, 4}},
		{"without the first reset its resumption goes", []int{2, 3}, []int{0, 1, 2, 3}},
		{"without the second reset its resumptions go", []int{1, 3}, []int{1, 2, 0, 0}},
		{"without the refusal the retry goes", []int{2}, []int{0, 1, 2, 0}},
		{"none: the server's own close stays", nil, []int{0, 1, 0, 0}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := run.resumeSeqs(tt.subset); !slices.Equal(got, tt.want) {
				t.Errorf("resumeSeqs(%v) = %v, want %v", tt.subset, got, tt.want)
			}
		})
	}
	// The refusal without the reset that led to it cannot happen: left out.
	out, err := run.Reduced([]byte("name = \"x\"\nseed = 1\n[[fault]]\nkind = \"status\"\nstatus = 503\n[[fault]]\nkind = \"status\"\nstatus = 502\n[[fault]]\nkind = \"reset\"\nafter_priming = true\n[[fault]]\nkind = \"drop\"\n"), "x", 1, []int{3})
	if err != nil || strings.Contains(string(out), "[[fault]]") {
		t.Errorf("Reduced: %v\n%s", err, out)
	}
	out, err = run.Reduced([]byte("name = \"x\"\nseed = 1\n[[fault]]\nkind = \"status\"\nstatus = 503\n[[fault]]\nkind = \"status\"\nstatus = 502\n[[fault]]\nkind = \"reset\"\nafter_priming = true\n[[fault]]\nkind = \"drop\"\n"), "x", 1, []int{2, 3})
	if err != nil || !strings.Contains(string(out), "stream_seq = 2") || !strings.Contains(string(out), "stream = 'resume'") {
		t.Errorf("Reduced: the refusal is the second resumption once the first reset is gone: %v\n%s", err, out)
	}
}

func TestReduced(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("..", "builtin", "flaky-gateway.toml"))
	if err != nil {
		t.Fatal(err)
	}
	run := Run{Firings: []Firing{
		{Fault: 2, Kind: "reset", Stream: "post", StreamSeq: 3, Method: "tools/call", Name: "slow-count", Event: -1, Resume: -1},
		{Fault: 0, Kind: "status", Stream: "resume", StreamSeq: 2, Event: -1, Resume: 1},
		{Fault: 1, Kind: "status", Stream: "get", StreamSeq: 1, Event: -1, Resume: -1},
	}, Resumes: []Resumption{{1, -1}, {1, 0}}}
	out, err := run.Reduced(text, "shrunk-flaky-gateway", 3, []int{0, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, w := range []string{"stream_seq = 2", "stream_seq = 3", "status = 503", "retry_after = '2s'", "after_priming = true",
		"request_method = 'tools/call'", "request_name = 'slow-count'", "seed = 3",
		"[[fault]]\nkind = 'reset'\n", "headers = {", "status = 502"} {
		if !strings.Contains(s, w) {
			t.Errorf("reduced profile lacks %s:\n%s", w, s)
		}
	}
	if strings.Contains(s, "probability") || strings.Count(s, "[[fault]]") != 3 {
		t.Errorf("reduced profile keeps chance, or not one fault per firing:\n%s", s)
	}
	p, err := profiles.Parse("shrunk.toml", bytes.NewReader(out))
	if err != nil {
		t.Fatalf("%v\n%s", err, s)
	}
	if _, err := profiles.NewActive(p, nil); err != nil {
		t.Error(err)
	}

	// A fault on events gets nth; close keeps its own after.
	ev := []byte("name = \"x\"\nseed = 1\n[[fault]]\nkind = \"drop\"\nprobability = 0.5\nstream_after = \"1s\"\n[[fault]]\nkind = \"close\"\nafter = \"2s\"\nrun_after = \"1s\"\n")
	run = Run{Firings: []Firing{{Fault: 0, Kind: "drop", Stream: "post", StreamSeq: 1, Event: 4, Resume: -1}, {Fault: 1, Kind: "close", Stream: "get", StreamSeq: 1, Event: -1, Resume: -1}, {Fault: 7, Kind: "drop", Resume: -1}}}
	out, err = run.Reduced(ev, "x", 1, []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	s = string(out)
	if !strings.Contains(s, "nth = 4") || strings.Contains(s, "stream_after") || !strings.Contains(s, "after = '2s'") || strings.Contains(s, "run_after") {
		t.Errorf("reduced profile:\n%s", s)
	}
	if _, err := run.Reduced(ev, "x", 1, []int{2}); err == nil {
		t.Error("a firing of a fault the profile lacks: no error")
	}
}

// TestRecorderBounded: a trace with more firings than shrink can use
// keeps the first, and says so.
func TestRecorderBounded(t *testing.T) {
	var r Recorder
	r.Observe(request(1, mcp.StreamPost, 1, toolCall))
	for i := range maxFirings + 10 {
		r.Observe(fired(event(1, i), 0, "drop"))
	}
	if run := r.Run(); len(run.Firings) != maxFirings || !run.Truncated {
		t.Errorf("%d firings kept (truncated %v), want %d and truncated", len(run.Firings), run.Truncated, maxFirings)
	}
}

// TestRecorderSeesAProfileChange: a firing after a change of profile
// names a fault of another profile, which shrink must know.
func TestRecorderSeesAProfileChange(t *testing.T) {
	var r Recorder
	r.Observe(request(1, mcp.StreamPost, 1, toolCall))
	if r.Run().Changed {
		t.Fatal("changed before any change")
	}
	r.Observe(&observe.Observation{Kind: observe.KindProfile, Profile: &observe.ProfileChange{Action: observe.ProfileSwap}})
	if !r.Run().Changed {
		t.Error("a profile swap not seen")
	}
}
