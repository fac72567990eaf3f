package profiles_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy/mcp"
)

// TestPresetsValidate: every preset parses, is named after its file, says
// what it imitates and cites where its numbers come from, and no preset
// shares a name with a test profile.
func TestPresetsValidate(t *testing.T) {
	presets := profiles.Presets()
	if len(presets) < 7 {
		t.Fatalf("Presets() = %v, want at least 7", presets)
	}
	for _, name := range presets {
		if slices.Contains(profiles.Names(), name) {
			t.Errorf("%s is both a preset and a test profile", name)
		}
		p, err := profiles.Builtin(name)
		if err != nil {
			t.Errorf("Builtin(%q): %v", name, err)
			continue
		}
		if p.Name != name || len(p.Description) < 100 || len(p.Faults) == 0 {
			t.Errorf("%s: name %q, %d-byte description, %d faults", name, p.Name, len(p.Description), len(p.Faults))
		}
		if !strings.Contains(p.Description, "(https://") {
			t.Errorf("%s: the description cites no source for its numbers", name)
		}
		if _, err := p.Plan(p.Seed); err != nil {
			t.Errorf("%s: Plan: %v", name, err)
		}
	}
}

// TestPresetTimeouts: each preset arms the timeout it is named after on
// the streams its intermediary cuts, and no other.
func TestPresetTimeouts(t *testing.T) {
	all := []mcp.StreamType{mcp.StreamPost, mcp.StreamGet, mcp.StreamResume}
	for _, tc := range []struct {
		name    string
		silence time.Duration
		on      []mcp.StreamType
	}{
		{"alb-idle-60s", 60 * time.Second, all},
		{"cloudflare-idle-100s", 100 * time.Second, all},
		{"envoy-stream-idle-300s", 300 * time.Second, all},
		{"editor-idle-305s", 305 * time.Second, all},
		{"nginx-buffering", 60 * time.Second, all},
		{"httpx-read-30s", 30 * time.Second, []mcp.StreamType{mcp.StreamPost, mcp.StreamResume}},
		{"envoy-route-30s", 0, nil},
	} {
		set := builtinPlan(t, tc.name)
		for i, st := range all {
			want := time.Duration(0)
			if slices.Contains(tc.on, st) {
				want = tc.silence
			}
			if got := set.Stream(exchange(st, i+1, "tools/call")).Start().CloseIdle; got != want {
				t.Errorf("%s: %v stream idles out after %v, want %v", tc.name, st, got, want)
			}
		}
	}
}

// TestHTTPXPresetRefusesTheStandaloneStream: the buffered httpx gateway
// answers a standalone GET 503 after its 30 s read timeout, and forwards
// POSTs.
func TestHTTPXPresetRefusesTheStandaloneStream(t *testing.T) {
	set := builtinPlan(t, "httpx-read-30s")
	a := set.Exchange(exchange(mcp.StreamGet, 1, ""))
	if a.Status != 503 || a.Latency != 30*time.Second {
		t.Errorf("standalone GET: status %d after %v, want 503 after 30s", a.Status, a.Latency)
	}
	if a := set.Exchange(exchange(mcp.StreamPost, 2, "tools/call")); a.Status != 0 || a.Latency != 0 {
		t.Errorf("POST: status %d after %v, want it forwarded", a.Status, a.Latency)
	}
}

// TestNginxPresetBuffersEveryStream: nginx buffers the standalone GET
// stream and resumed streams as it does POST answers.
func TestNginxPresetBuffersEveryStream(t *testing.T) {
	set := builtinPlan(t, "nginx-buffering")
	for i, st := range []mcp.StreamType{mcp.StreamPost, mcp.StreamGet, mcp.StreamResume} {
		sp := set.Stream(exchange(st, i+1, ""))
		sp.Start()
		ev := answer()[1]
		if !sp.Event(&ev).Buffer {
			t.Errorf("%v stream: a small event is not held", st)
		}
	}
}

// TestPresetsAreDocumented: every preset has its row in profiles.md.
func TestPresetsAreDocumented(t *testing.T) {
	ref, err := os.ReadFile(filepath.Join("..", "docs", "profiles.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range profiles.Presets() {
		if !strings.Contains(string(ref), "| `"+name+"` |") {
			t.Errorf("preset %s has no row in profiles.md", name)
		}
	}
}

// TestPresetsResolve: a preset is resolved by its bare name, as a test
// profile is, and a mistyped one is suggested.
func TestPresetsResolve(t *testing.T) {
	if p, err := profiles.Resolve("nginx-buffering"); err != nil || p.Name != "nginx-buffering" {
		t.Errorf("Resolve(nginx-buffering) = %v, %v", p, err)
	}
	_, err := profiles.Resolve("alb-idle-6s")
	if !errors.Is(err, profiles.ErrUnknownProfile) || !strings.Contains(err.Error(), `did you mean "alb-idle-60s"`) {
		t.Errorf("Resolve(alb-idle-6s) = %v", err)
	}
}
