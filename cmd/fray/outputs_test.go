package main

import (
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/report"
)

// TestReportToStdout: - as the file of --report or --junit is stdout,
// which then holds that file alone, for a pipe; the summary goes to
// stderr. (That both cannot go there is in TestEveryCommandBadArgumentExits2.)
func TestReportToStdout(t *testing.T) {
	for _, tc := range []struct {
		flag  string
		parse func(string) error
	}{
		{"--report", func(s string) error { _, err := report.ReadJSON(strings.NewReader(s)); return err }},
		{"--junit", func(s string) error { var v struct{}; return xml.Unmarshal([]byte(s), &v) }},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			ctx := within(t, 20*time.Second)
			up := sseUpstream(t)
			base, stop := startFray(t, ctx, "proxy", "--upstream", up.URL, "--listen", "127.0.0.1:0", "--quiet", "--allow-inconclusive", tc.flag, "-")
			postThrough(t, ctx, base)
			code, stdout, stderr := stop()
			if code != exitOK {
				t.Fatalf("exit %d; stderr:\n%s", code, stderr)
			}
			if err := tc.parse(stdout); err != nil {
				t.Errorf("stdout is not the file alone: %v\n%s", err, stdout)
			}
			if !strings.Contains(stderr, "verdict") {
				t.Errorf("the summary is not on stderr:\n%s", stderr)
			}
		})
	}
}
