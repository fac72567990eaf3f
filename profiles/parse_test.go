package profiles_test

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy/checks"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if got != string(want) {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestFiveMistakesFiveErrors(t *testing.T) {
	p, err := profiles.Load(filepath.Join("testdata", "five-mistakes.toml"))
	if p != nil {
		t.Fatal("Load returned a profile despite mistakes")
	}
	var es profiles.Errors
	if !errors.As(err, &es) {
		t.Fatalf("error %v is not Errors", err)
	}
	if len(es) != 5 {
		t.Errorf("%d errors, want 5:\n%v", len(es), err)
	}
	for _, e := range es {
		if e.Line == 0 || e.Col == 0 {
			t.Errorf("no position: %v", e)
		}
	}
	golden(t, "five-mistakes.golden", err.Error()+"\n")
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, toml, want string
		err              error
	}{
		{"syntax", "name = \n", "x.toml:1:8: unexpected character U+000A at start of value", profiles.ErrSyntax},
		{"unknown top key", "nmae = \"x\"\n", `x.toml:1:1: nmae: unknown key "nmae" (did you mean "name"?) (a profile has name, description, seed, exercises, checks, fault)`, profiles.ErrUnknownKey},
		{"unknown top key, nothing near", "colour = \"x\"\n", `x.toml:1:1: colour: unknown key "colour" (a profile has name, description, seed, exercises, checks, fault)`, profiles.ErrUnknownKey},
		{"seed type", "seed = \"42\"\n", `x.toml:1:8: seed: "42" is not an integer`, profiles.ErrType},
		{"negative seed", "seed = -1\n", `x.toml:1:8: seed: -1 is negative`, profiles.ErrRange},
		{"typo'd fault key", "[[fault]]\nkind = \"drop\"\nprobabilty = 0.5\n", `x.toml:3:1: fault[0].probabilty: unknown key "probabilty" (did you mean "probability"?)`, faults.ErrUnknownKey},
		{"inline fault array", "fault = [{ kind = \"delay\", delay = 5 }]\n", `x.toml:1:36: fault[0].delay: 5 is not a duration (write a string such as "250ms")`, faults.ErrType},
		{"nested check id", "[checks]\nclient.retry-honoured = \"sometimes\"\n", `x.toml:2:25: checks.client.retry-honoured: "sometimes" is not "error", "warning" or "off"`, profiles.ErrRange},
		{"unknown check id", "[checks]\nretry = \"off\"\n", `x.toml:2:1: checks.retry: unknown check "retry"`, profiles.ErrUnknownKey},
		{"misspelt check id", "[checks]\nclient.retry-honored = \"off\"\n", `x.toml:2:8: checks.client.retry-honored: unknown check "client.retry-honored" (did you mean "client.retry-honoured"?)`, profiles.ErrUnknownKey},
		{"quoted check id", "\n[checks]\n\"server.priming\" = \"warning\"\n", `x.toml:3:1: checks."server.priming": unknown check "server.priming" (did you mean "server.priming-event"?)`, profiles.ErrUnknownKey},
		{"provisional check id", "[checks]\n\"client.resumes-with-last-event-id\" = \"error\"\n", `x.toml:2:1: checks."client.resumes-with-last-event-id": unknown check "client.resumes-with-last-event-id" (did you mean "client.last-event-id"?)`, profiles.ErrUnknownKey},
		{"header in sub-table", "[[fault]]\nkind = \"status\"\nstatus = 503\n[fault.headers]\n\"Bad Name\" = \"x\"\n", `x.toml:5:14: fault[0].headers.Bad Name: "Bad Name" is not a valid header name`, faults.ErrRange},
		{"missing parameter", "[[fault]]\nkind = \"throttle\"\n", `x.toml:1:3: fault[0]: kind "throttle" needs bytes_per_second (an integer)`, faults.ErrMissing},
		{"kind not a string", "[[fault]]\nkind = 3\n", `x.toml:2:8: fault[0].kind: 3 is not a string`, profiles.ErrType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := profiles.Parse("x.toml", strings.NewReader(tt.toml))
			if p != nil || err == nil {
				t.Fatalf("Parse succeeded, want %s", tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got %s\nwant %s", err, tt.want)
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("errors.Is(%v) = false", tt.err)
			}
		})
	}
}

func TestParseDefaultsAndChecks(t *testing.T) {
	src := `description = "d"
[checks]
"client.retry-honoured" = "warning"
server.priming-event = "off"
[[fault]]
kind = "drop"
`
	p, err := profiles.Parse("dir/my-profile.toml", strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "my-profile" || p.Seed != 0 || len(p.Faults) != 1 || p.Faults[0].Kind != "drop" {
		t.Errorf("got %+v", p)
	}
	if p.Checks["client.retry-honoured"] != checks.Warning || p.Checks["server.priming-event"] != checks.Off {
		t.Errorf("Checks = %v", p.Checks)
	}
}

func TestValidateCodeBuiltProfile(t *testing.T) {
	p := &profiles.Profile{Faults: []faults.Spec{{Kind: "nope"}}, Checks: map[string]checks.Severity{"a.b": "off", "e2e.no-message-lost": "loud"}}
	err := p.Validate()
	want := "fault[0].kind: unknown kind \"nope\"\nchecks.a.b: unknown check \"a.b\"\nchecks.e2e.no-message-lost: \"loud\" is not \"error\", \"warning\" or \"off\""
	if err == nil || err.Error() != want {
		t.Errorf("Validate() = %v, want %s", err, want)
	}
}

// allocated returns the bytes fn allocated.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestHostileProfiles: documents nested far deeper than a profile needs,
// each just under MaxSize, are refused with the place where they nest too
// deep, for memory in proportion to their size (a profile's key paths
// were once each kept whole: a dotted key of n parts cost n²/2 bytes).
func TestHostileProfiles(t *testing.T) {
	n := profiles.MaxSize / 3
	for _, tc := range []struct{ name, doc string }{
		{"dotted key", strings.Repeat("a.", n) + "a = 1\n"},
		{"table header", "[" + strings.Repeat("a.", n) + "a]\nx = 1\n"},
		{"nested arrays", "a = " + strings.Repeat("[", n/4) + strings.Repeat("]", n/4) + "\n"},
		{"nested inline tables", "a = " + strings.Repeat("{b=", n/4) + "1" + strings.Repeat("}", n/4) + "\n"},
		{"array tables", "[[" + strings.Repeat("a.", n/2) + "a]]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.doc) > profiles.MaxSize {
				t.Fatalf("the document is %d bytes, over MaxSize", len(tc.doc))
			}
			var err error
			used := allocated(func() { _, err = profiles.Parse("deep.toml", strings.NewReader(tc.doc)) })
			var es profiles.Errors
			if !errors.As(err, &es) || len(es) != 1 || !errors.Is(es[0], profiles.ErrSize) {
				t.Fatalf("err = %v, want one size error", err)
			}
			if msg := es[0].Error(); !strings.HasPrefix(msg, "deep.toml:1:") || !strings.Contains(msg, "nest more than 32 deep") {
				t.Errorf("error %q does not say where the document nests too deep", msg)
			}
			if limit := uint64(200 * len(tc.doc)); used > limit {
				t.Errorf("parsing %d bytes allocated %d bytes, over %d", len(tc.doc), used, limit)
			}
		})
	}
}

// TestDeepButAllowedKeys: a key path of the most parts allowed, each
// long, is placed in an error message as before.
func TestDeepButAllowedKeys(t *testing.T) {
	long := strings.Repeat("k", 1000)
	doc := "[checks]\n" + strings.Repeat(long+".", 29) + "x = \"loud\"\n"
	var err error
	used := allocated(func() { _, err = profiles.Parse("long.toml", strings.NewReader(doc)) })
	if err == nil || !strings.HasPrefix(err.Error(), "long.toml:2:") {
		t.Errorf("err = %v, want an error on line 2", err)
	}
	if limit := uint64(200 * len(doc)); used > limit {
		t.Errorf("parsing %d bytes allocated %d bytes, over %d", len(doc), used, limit)
	}
}

// TestProfileTooLarge: a profile over MaxSize is refused with its size
// and the limit.
func TestProfileTooLarge(t *testing.T) {
	doc := strings.Repeat("# a comment line of 32 bytes ..\n", profiles.MaxSize/32+10)
	_, err := profiles.Parse("big.toml", strings.NewReader(doc))
	want := fmt.Sprintf("big.toml: the profile is %d bytes, over the limit of %d bytes (64 KiB)", len(doc), profiles.MaxSize)
	if err == nil || !strings.HasPrefix(err.Error(), want) || !errors.Is(err, profiles.ErrSize) {
		t.Errorf("err = %v, want it to start %q", err, want)
	}
}
