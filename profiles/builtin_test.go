package profiles_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/frayproxy/fray/profiles"
)

func TestBuiltinsValidate(t *testing.T) {
	want := []string{"buffering-proxy", "cut-fin", "cut-rst", "flaky-gateway", "gateway-errors", "idle-cut-125s", "idle-cut-300s",
		"legacy-sse", "lossy-resume", "mobile-network", "no-priming", "polling-server", "retry-storm", "soak", "stateless-cut"}
	names := profiles.Names()
	if len(names) != len(want) {
		t.Fatalf("Names() = %v, want %v", names, want)
	}
	for i, name := range names {
		if name != want[i] {
			t.Fatalf("Names() = %v, want %v", names, want)
		}
		t.Run(name, func(t *testing.T) {
			p, err := profiles.Builtin(name)
			if err != nil {
				t.Fatalf("Builtin(%q): %v", name, err)
			}
			if p.Name != name || len(p.Description) < 100 || len(p.Faults) == 0 {
				t.Errorf("name %q, %d-byte description, %d faults", p.Name, len(p.Description), len(p.Faults))
			}
			if _, err := p.Plan(p.Seed); err != nil {
				t.Errorf("Plan: %v", err)
			}
		})
	}
}

// TestUnknownBuiltinSuggests: a mistyped built-in name fails with
// ErrUnknownProfile and names the built-in it most likely meant.
func TestUnknownBuiltinSuggests(t *testing.T) {
	_, err := profiles.Resolve("lossy")
	if !errors.Is(err, profiles.ErrUnknownProfile) {
		t.Fatalf("Resolve(lossy) = %v, want ErrUnknownProfile", err)
	}
	if want := `unknown profile "lossy" (did you mean "lossy-resume"?)`; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
}
