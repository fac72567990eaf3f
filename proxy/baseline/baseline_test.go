package baseline_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/frayproxy/fray/proxy/baseline"
	"github.com/frayproxy/fray/proxy/report"
)

func TestParse(t *testing.T) {
	const text = `# fray's expected failures
server:
  - server.priming-event          # the SDK does not prime streams yet
  - "e2e.no-message-lost"
client:
  - lossy-resume:client.backoff   # only under lossy-resume
  - client.retry-honoured
`
	got, err := baseline.Parse("b.yml", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	want := []report.BaselineEntry{
		{Check: "server.priming-event", Line: 3, Reason: "the SDK does not prime streams yet"},
		{Check: "e2e.no-message-lost", Line: 4},
		{Check: "client.backoff", Profile: "lossy-resume", Line: 6, Reason: "only under lossy-resume"},
		{Check: "client.retry-honoured", Line: 7},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestParseEmpty(t *testing.T) {
	for _, text := range []string{"", "# nothing yet\n", "server: []\nclient: []\n", "---\nserver:\n"} {
		got, err := baseline.Parse("b.yml", strings.NewReader(text))
		if err != nil || len(got) != 0 {
			t.Errorf("%q: %+v, %v; want no entries", text, got, err)
		}
	}
}

// TestParseErrors: every error names the file, the line and the value,
// and says what to write instead.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"unknown check id", "server:\n  - server.priming-evnt\n",
			[]string{`baseline b.yml line 2: "server.priming-evnt" is not a fray check id`, `did you mean "server.priming-event"`, "docs/checks.md"}},
		{"a scenario name of the suite", "server:\n  - tools-call-with-progress\n",
			[]string{`line 2: "tools-call-with-progress" is not a fray check id`}},
		{"wrong list", "client:\n  - server.priming-event\n",
			[]string{`line 2: "server.priming-event" judges the server; move it under server:`}},
		{"unknown key", "servers:\n  - server.priming-event\n",
			[]string{`line 1: "servers:": a baseline holds the lists server: and client:`}},
		{"entry before a key", "- server.priming-event\n",
			[]string{`line 1: "- server.priming-event": an entry before any list`}},
		{"flow list", "server: [server.priming-event]\n",
			[]string{`line 1:`, `write the entries one a line under server:`}},
		{"a map entry", "server:\n  - check: server.priming-event\n",
			[]string{`line 2: "check: server.priming-event" is a map`}},
		{"duplicate", "server:\n  - server.priming-event\n  - server.priming-event\n",
			[]string{`line 3: "server.priming-event" is listed already at line 2`}},
		{"scoped and unscoped", "server:\n  - server.priming-event\n  - p:server.priming-event\n",
			[]string{`line 3:`, `line 2 lists server.priming-event under every profile already`}},
		{"unscoped after scoped", "server:\n  - p:server.priming-event\n  - server.priming-event\n",
			[]string{`line 3:`, `line 2 lists server.priming-event under one profile already`}},
		{"empty profile", "server:\n  - :server.priming-event\n",
			[]string{`line 2: ":server.priming-event": write PROFILE:CHECK-ID`}},
		{"key twice", "server:\nclient:\nserver:\n",
			[]string{`line 3: "server:": server: is already at line 1`}},
		{"not an entry", "server:\n  server.priming-event\n",
			[]string{`line 2: "server.priming-event": not an entry`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := baseline.Parse("b.yml", strings.NewReader(tc.text))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fray-baseline.yml")
	if err := os.WriteFile(path, []byte("client:\n  - client.backoff\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := baseline.Read(path)
	if err != nil || len(got) != 1 || got[0].Check != "client.backoff" {
		t.Errorf("%+v, %v", got, err)
	}
	_, err = baseline.Read(filepath.Join(t.TempDir(), "none.yml"))
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "none.yml") {
		t.Errorf("a missing file: %v", err)
	}
}

// FuzzParse: no input makes Parse panic, and every entry it returns is a
// known check with a line inside the text.
func FuzzParse(f *testing.F) {
	f.Add("server:\n  - server.priming-event # why\nclient:\n  - p:client.backoff\n")
	f.Add("client: []\n")
	f.Add("server:\n  - 'e2e.no-message-lost'\n")
	f.Fuzz(func(t *testing.T, text string) {
		entries, err := baseline.Parse("f.yml", strings.NewReader(text))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "baseline ") {
				t.Errorf("error without the file: %v", err)
			}
			return
		}
		lines := strings.Count(text, "\n") + 1
		for _, e := range entries {
			if e.Line < 1 || e.Line > lines || e.Check == "" {
				t.Errorf("entry %+v of a %d-line text", e, lines)
			}
		}
	})
}
