package report_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/report"
)

// TestSummary: the summary shows the checks that need attention, with
// their first evidence, and counts the others; the verbose one lists
// every check.
func TestSummary(t *testing.T) {
	r := sample()
	for _, tc := range []struct {
		name    string
		opts    report.SummaryOptions
		golden  string
		rows    []string // checks with a row
		norows  []string // checks without one
		counted string
	}{
		{"compact", report.SummaryOptions{}, "sample.summary.txt",
			[]string{"client.retry-honoured", "server.priming-event"},
			[]string{"client.last-event-id", "server.replay-complete", "e2e.every-request-answered"},
			"  checks: 1 failed, 1 warned, 1 passed, 2 skipped (-v lists every check)\n"},
		{"verbose", report.SummaryOptions{Verbose: true}, "sample.summary-verbose.txt",
			[]string{"client.retry-honoured", "server.priming-event", "client.last-event-id", "server.replay-complete", "e2e.every-request-answered"},
			nil,
			"  checks: 1 failed, 1 warned, 1 passed, 2 skipped\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := summary(t, r, tc.opts)
			golden(t, tc.golden, []byte(out))
			// The command's failure comes before the verdict, the reason after it.
			if !strings.HasPrefix(out, "fray: the client command \"node client.mjs\" FAILED: exit status 1\n"+
				"fray: verdict FAIL (profile polling-server, seed 1, 3.21s observed)\n"+
				"  why: failed: client.retry-honoured (3); the client command failed: exit status 1\n") {
				t.Errorf("verdict lines:\n%s", out)
			}
			if !strings.Contains(out, "5 faults injected: set-retry 2, close 3\n"+tc.counted) {
				t.Errorf("faults line and counts missing:\n%s", out)
			}
			for _, id := range tc.rows {
				c := checkOf(r, id)
				row := rowOf(out, id)
				if row == "" {
					t.Errorf("no row for %s:\n%s", id, out)
					continue
				}
				// Under the row of a check that failed or warned: its first
				// evidence whole, the message first.
				ev := evidenceOf(out, id)
				if len(c.Evidence) > 0 && (c.Status == report.StatusFail || c.Status == report.StatusWarn) &&
					!strings.HasPrefix(ev, c.Evidence[0].Message+" (at ") {
					t.Errorf("evidence under %s is %q, want the first evidence %q whole", id, ev, c.Evidence[0].Message)
				}
			}
			for _, id := range tc.norows {
				if row := rowOf(out, id); row != "" {
					t.Errorf("row %q for a check that needs no attention", row)
				}
			}
			if row := rowOf(out, "client.retry-honoured"); !strings.Contains(row, " FAIL ") || !strings.HasSuffix(row, " 3\n") {
				t.Errorf("row %q, want status FAIL and count 3", row)
			}
			for line := range strings.Lines(out) {
				if n := len([]rune(strings.TrimSuffix(line, "\n"))); n > 100 && !strings.HasPrefix(line, "  ") {
					t.Errorf("table line of %d columns: %q", n, line)
				}
			}
		})
	}
}

// TestSummaryAllPassed: with nothing to look at, the summary has no
// table, only the counts.
func TestSummaryAllPassed(t *testing.T) {
	r := report.Report{Schema: 1, Verdict: report.VerdictPass, Checks: []report.Check{
		{ID: "server.a", Status: report.StatusPass}, {ID: "server.b", Status: report.StatusPass}, {ID: "client.c", Status: report.StatusSkip},
	}}
	out := summary(t, r, report.SummaryOptions{})
	if !strings.HasSuffix(out, "\n  checks: 2 passed, 1 skipped (-v lists every check)\n") || strings.Contains(out, "CHECK") {
		t.Errorf("summary:\n%s", out)
	}
}

func checkOf(r report.Report, id string) report.Check {
	for _, c := range r.Checks {
		if c.ID == id {
			return c
		}
	}
	return report.Check{}
}

func rowOf(out, id string) string {
	for line := range strings.Lines(out) {
		if strings.HasPrefix(line, id+" ") {
			return line
		}
	}
	return ""
}

// evidenceOf is the evidence under the row of check id, its wrapped
// lines joined with spaces; "" when none.
func evidenceOf(out, id string) string {
	var parts []string
	in := false
	for line := range strings.Lines(out) {
		switch {
		case strings.HasPrefix(line, id+" "):
			in = true
		case in && strings.HasPrefix(line, "    "):
			parts = append(parts, strings.TrimSpace(line))
		default:
			in = false
		}
	}
	return strings.Join(parts, " ")
}

// TestSummaryShowsEvidenceWhole: a long first evidence is wrapped to the
// width asked for (100 by default), never cut, with the cause and where
// it was seen after the message; -v shows it the same.
func TestSummaryShowsEvidenceWhole(t *testing.T) {
	msg := "request 2 (tools/call) got no response delivered to the client: " + strings.Repeat("the server closed the stream and never replayed it ", 8) + "end"
	r := report.Report{Schema: 1, Verdict: report.VerdictFail, Checks: []report.Check{{
		ID: "e2e.every-request-answered", Status: report.StatusFail, Count: 1,
		Evidence: []report.Evidence{{Message: msg, AtMS: 1204, Session: 1, Exchange: 9, Fault: &report.FaultRef{Index: 0, Kind: "close"}}},
	}}}
	want := msg + " (at 1.204s, session 1, exchange 9, after fault 0 (close))"
	for _, opts := range []report.SummaryOptions{{}, {Verbose: true}, {Width: 60}, {Width: 60, Verbose: true}, {Width: 10}} {
		out := summary(t, r, opts)
		if got := evidenceOf(out, "e2e.every-request-answered"); got != want {
			t.Errorf("%+v: evidence %q, want it whole: %q", opts, got, want)
		}
		width := opts.Width
		if width == 0 {
			width = 100
		}
		width = max(width, 4+40) // the indent, and the least the text keeps
		lines := 0
		for line := range strings.Lines(out) {
			if strings.HasPrefix(line, "    ") {
				lines++
				if n := len([]rune(strings.TrimSuffix(line, "\n"))); n > width {
					t.Errorf("%+v: evidence line of %d columns, want at most %d: %q", opts, n, width, line)
				}
			}
		}
		if lines < 2 {
			t.Errorf("%+v: the evidence is not wrapped:\n%s", opts, out)
		}
	}
}

func TestSummaryNoChecks(t *testing.T) {
	if out := summary(t, report.Report{Schema: 1, Verdict: report.VerdictPass, DurationMS: 1500}, report.SummaryOptions{}); !strings.Contains(out, "verdict PASS") || !strings.Contains(out, "no checks ran") {
		t.Errorf("summary:\n%s", out)
	}
}

func TestFormatEvidence(t *testing.T) {
	got := report.FormatEvidence(report.Evidence{Message: "m", Instance: 2, Session: 1, Exchange: 6, Related: []uint64{4, 5},
		EventIDs: []string{"a"}, AtMS: 1204, Fault: &report.FaultRef{Index: 1, Kind: "close"}})
	want := `at 1.204s, instance 2, session 1, exchange 6 (related 4, 5), event ids ["a"], after fault 1 (close): m`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestLiveString(t *testing.T) {
	got := report.Live{Elapsed: 12*time.Second + 300*time.Millisecond, Exchanges: 1, Events: 40, Faults: 2}.String()
	if want := "fray 12s: 1 exchange, 40 events, 2 faults, 0 findings"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestReportsDocShowsTheSummary: docs/reports.md shows the summary as it
// is printed.
func TestReportsDocShowsTheSummary(t *testing.T) {
	doc := readFile(t, filepath.Join("..", "..", "docs", "reports.md"))
	want := readFile(t, filepath.Join("testdata", "sample.summary.txt"))
	if !strings.Contains(string(doc), "```\n"+string(want)+"```\n") {
		t.Errorf("docs/reports.md does not show the summary of testdata/sample.summary.txt:\n%s", want)
	}
}
