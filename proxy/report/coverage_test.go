package report_test

import (
	"strings"
	"testing"

	"github.com/frayproxy/fray/proxy/report"
)

// TestCoverageLine: the line names cuts, resumptions and re-issues always,
// the rest when they happened, each count with its noun.
func TestCoverageLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    report.Coverage
		want string
	}{
		{"nothing", report.Coverage{}, "exercised: 0 cuts with an answer pending, 0 resumptions, 0 re-issues"},
		{"everything", report.Coverage{Cuts: 3, BeforeEvent: 1, MidStream: 2, Unrecoverable: 1, Resumptions: 2, Complete: 1, Refused: 1,
			Reissues: 1, ServerCloses: 2, StandaloneCuts: 1, StandaloneRefused: 1, SessionsLost: 1, NewSessions: 1, RetryWaits: 1},
			"exercised: 3 cuts with an answer pending (1 before any event, 2 mid-stream, 1 unrecoverable), 2 resumptions (1 complete, 1 refused), " +
				"1 re-issue, 2 closes by the server with an answer pending, 1 standalone stream cut, 1 standalone GET refused, 1 session lost (1 new), 1 retry wait judged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.c.Line(); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestSummaryWrapsTheCoverageBetweenParts: the summary breaks a long
// exercised line between its parts, within the summary's width.
func TestSummaryWrapsTheCoverageBetweenParts(t *testing.T) {
	c := report.Coverage{Cuts: 3, BeforeEvent: 1, MidStream: 2, Unrecoverable: 1, Resumptions: 2, Complete: 1, Refused: 1,
		ServerCloses: 2, StandaloneCuts: 1, SessionsLost: 1, NewSessions: 1, RetryWaits: 1}
	_, rest, _ := strings.Cut(summary(t, report.Report{Verdict: report.VerdictPass, Coverage: &c}, report.SummaryOptions{}), "\n  exercised: ")
	var joined []string
	for i, line := range strings.Split(strings.TrimSuffix("  exercised: "+rest, "\n"), "\n") {
		if i > 0 && !strings.HasPrefix(line, "    ") {
			break
		}
		if s := strings.TrimSpace(line); i > 0 && (s[0] < '0' || s[0] > '9') {
			// Every part begins with its count.
			t.Errorf("a line begins inside a part: %q", line)
		}
		if len([]rune(line)) > 100 {
			t.Errorf("line of %d runes: %q", len([]rune(line)), line)
		}
		joined = append(joined, strings.TrimSpace(line))
	}
	if got := strings.Join(joined, " "); got != c.Line() {
		t.Errorf("wrapped lines join to %q, want %q", got, c.Line())
	}
}
