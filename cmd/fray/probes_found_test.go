package main

import (
	"strings"
	"testing"
	"time"
)

// TestProbesShowFoundIn: fray probes show names the released versions a
// probe found its bug in, and says nothing of them for a probe that found
// it in none it was run on.
func TestProbesShowFoundIn(t *testing.T) {
	code, out, stderr := runFray(t, 10*time.Second, "probes", "show", "transient-503-on-resume")
	if code != 0 || !strings.Contains(out, "# found in: github.com/modelcontextprotocol/go-sdk v1.8.0 (client)\n") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	if _, out, _ := runFray(t, 10*time.Second, "probes", "show", "get-reopen-refused"); strings.Contains(out, "# found in") {
		t.Errorf("get-reopen-refused: %q", out)
	}
}
