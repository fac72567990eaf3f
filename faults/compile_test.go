package faults_test

import (
	"errors"
	"testing"

	"github.com/frayproxy/fray/faults"
)

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name string
		spec faults.Spec
		want string
		err  error
	}{
		{"unknown kind", spec("delya"), `fault[0].kind: unknown kind "delya" (did you mean "delay"?)`, faults.ErrUnknownKind},
		{"unknown kind, nothing near", spec("teleport"), `fault[0].kind: unknown kind "teleport"`, faults.ErrUnknownKind},
		{"missing kind", spec(""), `fault[0].kind: kind is missing`, faults.ErrUnknownKind},
		{"not a duration", spec("delay", "delay", "fast"), `fault[0].delay: "fast" is not a duration`, faults.ErrType},
		{"bare number", spec("delay", "delay", int64(5)), `fault[0].delay: 5 is not a duration (write a string such as "250ms")`, faults.ErrType},
		{"negative", spec("delay", "delay", "-1s"), `fault[0].delay: "-1s" is negative`, faults.ErrRange},
		{"missing", spec("delay"), `fault[0]: kind "delay" needs delay (a duration such as "250ms")`, faults.ErrMissing},
		{"other kind's parameter", spec("drop", "copies", int64(2)), `fault[0].copies: copies is a parameter of kind "duplicate", not of "drop" (drop takes no parameters)`, faults.ErrUnknownKey},
		{"typo'd key", spec("drop", "strem", "post"), `fault[0].strem: unknown key "strem" (did you mean "stream"?)`, faults.ErrUnknownKey},
		{"unknown key", spec("delay", "delay", "1s", "colour", "red"), `fault[0].colour: unknown key "colour" (kind "delay" takes delay, jitter, and the selectors)`, faults.ErrUnknownKey},
		{"probability range", spec("drop", "probability", 1.5), `fault[0].probability: 1.5 is out of range 0..1`, faults.ErrRange},
		{"two triggers", spec("close", "after_events", int64(1), "after_priming", true), `fault[0].after_priming: after_priming cannot be used with after_events; kind "close" takes one of after_events, after, after_priming, before_response`, faults.ErrConflict},
		{"no trigger", spec("reset"), `fault[0]: kind "reset" needs one of after_events, after, after_priming, before_response`, faults.ErrMissing},
		{"event selector on exchange kind", spec("latency", "delay", "1s", "nth", int64(1)), `fault[0].nth: nth selects events, but this "latency" fault acts before any event`, faults.ErrConflict},
		{"event selector on a timed close", spec("close", "after", "1s", "priming", true), `fault[0].priming: priming selects events, but this "close" fault acts before any event`, faults.ErrConflict},
		{"bad stream", spec("drop", "stream", "sse"), `fault[0].stream: "sse" is not one of post, get, resume, legacy, other, any`, faults.ErrRange},
		{"every without for", spec("drop", "every", "1m"), `fault[0].every: every needs for (how long the fault stays on in each period)`, faults.ErrMissing},
		{"for not shorter than every", spec("drop", "every", "1m", "for", "1m"), `fault[0].for: for (1m0s) must be shorter than every (1m0s)`, faults.ErrConflict},
		{"times_scope alone", spec("drop", "times_scope", "session"), `fault[0].times_scope: times_scope needs times`, faults.ErrConflict},
		{"bad header", spec("status", "status", int64(503), "headers", map[string]any{"Bad Name": "x"}), `fault[0].headers.Bad Name: "Bad Name" is not a valid header name`, faults.ErrRange},
		{"status range", spec("status", "status", int64(99)), `fault[0].status: 99 is out of range 200..599`, faults.ErrRange},
		{"wrong type bool", spec("drop-request", "hang", "yes"), `fault[0].hang: "yes" is not true or false`, faults.ErrType},
		{"direction", spec("strip-header", "header", "Accept", "direction", "up"), `fault[0].direction: "up" is not "request" or "response"`, faults.ErrRange},
		{"header value with a line break", spec("rewrite-header", "header", "Mcp-Name", "value", "a\r\nX-Evil: 1"), `fault[0].value: "a\r\nX-Evil: 1" holds a line break or NUL, which no header value may`, faults.ErrRange},
		{"id with newline", spec("rewrite-id", "id", "a\nb"), `fault[0].id: "a\nb" holds a line break or control character, which an id cannot carry`, faults.ErrRange},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, err := faults.Compile(1, []faults.Spec{tt.spec})
			if set != nil || err == nil {
				t.Fatalf("Compile succeeded, want %q", tt.want)
			}
			var pe faults.ParamErrors
			if !errors.As(err, &pe) || len(pe) != 1 {
				t.Fatalf("error %v, want one ParamError", err)
			}
			if pe[0].Error() != tt.want {
				t.Errorf("error\n got %s\nwant %s", pe[0], tt.want)
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.err)
			}
		})
	}
}

func TestCompileReportsEverything(t *testing.T) {
	_, err := faults.Compile(1, []faults.Spec{
		spec("delay", "delay", "fast", "jitter", int64(3)),
		spec("nope"),
		spec("drop"),
		spec("close", "after", "1s", "nth", int64(2), "copies", int64(1)),
	})
	var pe faults.ParamErrors
	if !errors.As(err, &pe) {
		t.Fatalf("error %v", err)
	}
	want := []string{"fault[0].delay", "fault[0].jitter", "fault[1].kind", "fault[3].nth", "fault[3].copies"}
	if len(pe) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%v", len(pe), len(want), err)
	}
	for i, w := range want {
		if pe[i].Path() != w {
			t.Errorf("error %d at %s, want %s", i, pe[i].Path(), w)
		}
	}
}

func TestKindsAreDocumented(t *testing.T) {
	ks := faults.Kinds()
	if len(ks) != 25 {
		t.Errorf("%d kinds registered, want 25", len(ks))
	}
	seen := map[string]bool{}
	for _, k := range ks {
		if k.Summary == "" || k.On == "" || seen[k.Name] {
			t.Errorf("kind %+v: empty summary or target, or registered twice", k)
		}
		seen[k.Name] = true
	}
}

// TestNearest: a did-you-mean names the likely meant name, by edit distance
// or by a prefix only one name has, and nothing when no name is near.
func TestNearest(t *testing.T) {
	names := []string{"lossy-resume", "polling-server", "flaky-gateway", "legacy-sse", "list", "show", "lose"}
	for _, tc := range []struct{ in, want string }{
		{"polling-sever", "polling-server"},
		{"lossy", "lossy-resume"},
		{"lst", "list"},
		{"shwo", "show"},
		{"nope", ""},     // two edits from "lose" is too far for four letters
		{"l", ""},        // a prefix of three names
		{"teleport", ""}, // near nothing
		{"", ""},         // nothing to match
		{"flaky", "flaky-gateway"},
	} {
		if got := faults.Nearest(tc.in, names); got != tc.want {
			t.Errorf("Nearest(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := faults.DidYouMean("lst", names); got != ` (did you mean "list"?)` {
		t.Errorf("DidYouMean = %q", got)
	}
}
