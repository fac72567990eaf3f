package faults_test

import (
	"testing"

	"github.com/frayproxy/fray/faults"
)

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
