package report_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/report"
)

func TestSummary(t *testing.T) {
	var buf bytes.Buffer
	r := sample()
	if err := report.WriteSummary(&buf, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "sample.summary.txt", buf.Bytes())
	out := buf.String()
	// The command's failure comes before the verdict, the reason after it.
	if !strings.HasPrefix(out, "fray: the client command \"node client.mjs\" FAILED: exit status 1\n"+
		"fray: verdict FAIL (profile polling-server, seed 1, 3.21s observed)\n"+
		"  why: failed: client.retry-honoured (3); the client command failed: exit status 1\n") {
		t.Errorf("verdict lines:\n%s", out)
	}
	for _, c := range r.Checks {
		row := rowOf(out, c.ID)
		if row == "" {
			t.Errorf("no row for %s:\n%s", c.ID, out)
			continue
		}
		if len(c.Evidence) > 0 && !strings.Contains(row, c.Evidence[0].Message) {
			t.Errorf("row %q lacks the first evidence %q", row, c.Evidence[0].Message)
		}
	}
	if row := rowOf(out, "client.retry-honoured"); !strings.Contains(row, " FAIL ") || !strings.Contains(row, " 3 ") {
		t.Errorf("row %q, want status FAIL and count 3", row)
	}
	if !strings.Contains(out, "5 faults injected: set-retry 2, close 3") {
		t.Errorf("faults line missing:\n%s", out)
	}
}

func rowOf(out, id string) string {
	for line := range strings.Lines(out) {
		if strings.HasPrefix(line, id+" ") {
			return line
		}
	}
	return ""
}

func TestSummaryTruncatesLongEvidence(t *testing.T) {
	r := report.Report{Schema: 1, Verdict: report.VerdictFail, Checks: []report.Check{{
		ID: "server.x", Status: report.StatusFail, Count: 1, Evidence: []report.Evidence{{Message: strings.Repeat("x", 500)}},
	}}}
	var buf bytes.Buffer
	if err := report.WriteSummary(&buf, r); err != nil {
		t.Fatal(err)
	}
	row := rowOf(buf.String(), "server.x")
	if len([]rune(row)) > 200 || !strings.Contains(row, "…") {
		t.Errorf("row not truncated: %q", row)
	}
}

func TestSummaryNoChecks(t *testing.T) {
	var buf bytes.Buffer
	if err := report.WriteSummary(&buf, report.Report{Schema: 1, Verdict: report.VerdictPass, DurationMS: 1500}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "verdict PASS") || !strings.Contains(buf.String(), "no checks ran") {
		t.Errorf("summary:\n%s", buf.String())
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
