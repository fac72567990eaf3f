package report_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/report"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it)\n--- got:\n%s\n--- want:\n%s", name, got, want)
	}
}

// sample is a hand-built report with one check of each status.
func sample() report.Report {
	return report.Report{
		Schema:     report.SchemaVersion,
		Verdict:    report.VerdictFail,
		Why:        "failed: client.retry-honoured (3); the client command failed: exit status 1",
		Command:    &report.Command{Args: []string{"node", "client.mjs"}, ExitCode: 1, Error: "exit status 1"},
		Profile:    "polling-server",
		Seed:       1,
		DurationMS: 3210,
		Totals:     report.Totals{Sessions: 2, Exchanges: 14, Streams: 6, Events: 40, Resumptions: 3, Faults: 5, Findings: 4},
		Checks: []report.Check{
			{
				ID: "client.retry-honoured", Severity: checks.Error, Status: report.StatusFail, Count: 3, Applied: 3,
				Summary: "The client waits at least the retry it was given before it reconnects.",
				Evidence: []report.Evidence{
					{Message: "reconnected after 12ms, retry was 500ms", Session: 1, Exchange: 6, Related: []uint64{4}, EventIDs: []string{"1_0"}, AtMS: 1204, Fault: &report.FaultRef{Index: 0, Kind: "set-retry"}},
					{Message: "reconnected after 3ms, retry was 500ms", Session: 2, Exchange: 11, Related: []uint64{9}, AtMS: 2250},
				},
			},
			{
				ID: "server.priming-event", Severity: checks.Warning, Status: report.StatusWarn, Count: 1, Applied: 4,
				Summary:  "Every stream starts with an event that has an id and empty data.",
				Evidence: []report.Evidence{{Message: "the stream answering POST tools/call (id 2) began with an event that had data", Session: 1, Exchange: 3, AtMS: 80}},
			},
			{ID: "client.last-event-id", Severity: checks.Error, Status: report.StatusPass, Applied: 3, Summary: "A client resumes with the last event id delivered on that stream."},
			{ID: "server.replay-complete", Severity: checks.Off, Status: report.StatusSkip, Summary: "A resumed stream replays every event after Last-Event-ID."},
			{ID: "e2e.every-request-answered", Severity: checks.Error, Status: report.StatusSkip, Summary: "Every forwarded request gets its response."},
		},
		Faults:   []report.FaultCount{{Kind: "set-retry", Count: 2}, {Kind: "close", Count: 3}},
		Coverage: &report.Coverage{Cuts: 3, AfterPriming: 3, Resumptions: 3, Complete: 3, RetryWaits: 3},
	}
}

// readFile returns the file's bytes, failing the test when it cannot.
func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// summary is WriteSummary's text for r.
func summary(t *testing.T, r report.Report, opts report.SummaryOptions) string {
	t.Helper()
	var buf bytes.Buffer
	if err := report.WriteSummary(&buf, r, opts); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}
