package sweep

import (
	"bytes"
	"os"
	"path/filepath"
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

func TestRecorder(t *testing.T) {
	obs := []*observe.Observation{
		request(1, mcp.StreamPost, 0, observe.Message{Kind: mcp.RPCRequest, Method: "initialize"}),
		request(2, mcp.StreamGet, 1),
		fired(&observe.Observation{Kind: observe.KindResponse, Exchange: 2, Response: &observe.Response{Status: 502}}, 1, "status"),
		request(3, mcp.StreamPost, 1, toolCall),
		fired(event(3, 1), 2, "reset"),
		request(4, mcp.StreamResume, 1),
		fired(&observe.Observation{Kind: observe.KindResponse, Exchange: 4, Response: &observe.Response{Status: 503}}, 0, "status"),
		request(5, mcp.StreamResume, 1),
		fired(event(5, 3), 3, "drop"),
		fired(event(5, 3), 3, "drop"), // the same firing again: once
		fired(event(5, 4), 3, "drop"),
	}
	var r Recorder
	for _, o := range obs {
		r.Observe(o)
	}
	want := []string{
		"fault 1 (status) on get #1",
		"fault 2 (reset) on post #1 tools/call slow-count",
		"fault 0 (status) on resume #1",
		"fault 3 (drop) on resume #2 at event 3",
		"fault 3 (drop) on resume #2 at event 4",
	}
	var got []string
	for _, f := range r.Firings() {
		got = append(got, f.String())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("firings\n got %q\nwant %q", got, want)
	}
}

func TestReduced(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("..", "builtin", "flaky-gateway.toml"))
	if err != nil {
		t.Fatal(err)
	}
	fs := []Firing{
		{Fault: 0, Kind: "status", Stream: "resume", StreamSeq: 2, Event: -1},
		{Fault: 2, Kind: "reset", Stream: "post", StreamSeq: 3, Method: "tools/call", Name: "slow-count", Event: -1},
	}
	out, err := Reduced(text, "shrunk-flaky-gateway", 3, fs)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, w := range []string{"stream_seq = 2", "stream_seq = 3", "status = 503", "retry_after = '2s'", "after_priming = true",
		"request_method = 'tools/call'", "request_name = 'slow-count'", "seed = 3"} {
		if !strings.Contains(s, w) {
			t.Errorf("reduced profile lacks %s:\n%s", w, s)
		}
	}
	if strings.Contains(s, "probability") || strings.Count(s, "[[fault]]") != 2 {
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
	out, err = Reduced(ev, "x", 1, []Firing{{Fault: 0, Kind: "drop", Stream: "post", StreamSeq: 1, Event: 4}, {Fault: 1, Kind: "close", Stream: "get", StreamSeq: 1, Event: -1}})
	if err != nil {
		t.Fatal(err)
	}
	s = string(out)
	if !strings.Contains(s, "nth = 4") || strings.Contains(s, "stream_after") || !strings.Contains(s, "after = '2s'") || strings.Contains(s, "run_after") {
		t.Errorf("reduced profile:\n%s", s)
	}
	if _, err := Reduced(ev, "x", 1, []Firing{{Fault: 7, Kind: "drop"}}); err == nil {
		t.Error("a firing of a fault the profile lacks: no error")
	}
}
