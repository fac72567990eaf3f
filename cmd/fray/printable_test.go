package main

import (
	"strings"
	"testing"
)

// TestProbeDetailEscaped: a probe's detail, which quotes what the peers
// did, reaches the table with its control characters escaped.
func TestProbeDetailEscaped(t *testing.T) {
	got := oneLineDetail("id \x1b]52;c;ZXZpbA==\x07 \r\nfray: verdict PASS")
	if strings.ContainsAny(got, "\x1b\x07\r\n") || !strings.Contains(got, `\x1b]52;c;ZXZpbA==\x07`) {
		t.Errorf("oneLineDetail = %q", got)
	}
}
