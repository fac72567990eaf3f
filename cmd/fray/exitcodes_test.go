package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/report"
)

// verdictCommands are the commands that end with a verdict: each --help
// shows the exit-code table.
var verdictCommands = [][]string{{"run"}, {"proxy"}, {"demo"}, {"check"}, {"report", "merge"}, {"sweep"}}

// exitCodesLine is exitTable on one line, as the README and docs/cli.md
// show it: "exit codes: 0 pass, 1 ...".
func exitCodesLine() string {
	return "exit codes: " + strings.Join(exitCodeParts(), ", ")
}

// TestOneExitCodeTable holds the exit codes together: every command that
// gives a verdict shows the same table in its --help, the README shows it
// on one line, and docs/cli.md has the line and a row per code, no more,
// each row's meaning starting with the table's words.
func TestOneExitCodeTable(t *testing.T) {
	for _, cmd := range verdictCommands {
		_, stdout, _ := runFray(t, quick, append(cmd, "--help")...)
		var help []string
		for l := range strings.Lines(stdout) {
			help = append(help, strings.TrimSpace(l))
		}
		if !strings.Contains(strings.Join(help, "\n"), exitCodesHelp()) {
			t.Errorf("fray %s --help does not show the exit codes:\n%s\nwant:\n%s", strings.Join(cmd, " "), stdout, exitCodesHelp())
		}
	}
	readme := readFile(t, filepath.Join("..", "..", "README.md"))
	if !strings.Contains(string(readme), exitCodesLine()) {
		t.Errorf("README.md does not show %q", exitCodesLine())
	}
	b := readFile(t, filepath.Join("..", "..", "docs", "cli.md"))
	doc := string(b)
	sec := doc[strings.Index(doc, "## Exit codes"):]
	if !strings.Contains(sec, exitCodesLine()) {
		t.Errorf("docs/cli.md's exit codes do not show %q", exitCodesLine())
	}
	rows := regexp.MustCompile(`(?m)^\| (\d+) \| ([^|]*)`).FindAllStringSubmatch(sec, -1)
	if len(rows) != len(exitTable) {
		t.Fatalf("docs/cli.md has %d exit-code rows, want %d", len(rows), len(exitTable))
	}
	for i, e := range exitTable {
		if rows[i][1] != strconv.Itoa(e.code) || !strings.HasPrefix(rows[i][2], e.says) {
			t.Errorf("docs/cli.md's row %d: %q %q, want code %d meaning %q...", i, rows[i][1], rows[i][2], e.code, e.says)
		}
	}
	if seen := regexp.MustCompile(`exit codes: [^\n]*`).FindAllString(string(readme)+doc, -1); len(seen) == 0 {
		t.Error("no exit codes line found")
	} else {
		for _, l := range seen {
			if !strings.HasPrefix(l, exitCodesLine()) {
				t.Errorf("another exit-code line: %q, want %q", l, exitCodesLine())
			}
		}
	}
}

// TestInterruptedVerdict: a run stopped by a signal is neither pass nor
// fail: the summary, the JSON report and the exit code say interrupted,
// and what the verdict was up to then.
func TestInterruptedVerdict(t *testing.T) {
	r := report.Report{Schema: report.SchemaVersion, Verdict: report.VerdictFail, Why: "failed: client.retry-honoured (1)", Checks: []report.Check{{ID: "client.retry-honoured", Status: report.StatusFail, Count: 1}}}
	path := filepath.Join(t.TempDir(), "r.json")
	var stdout strings.Builder
	o := &outputs{paths: map[string]string{"report": path}, stdout: &stdout, summary: &stdout, interrupted: true}
	code := exitCode(o.finish(r))
	got := readReport(t, path)
	if code != exitInterrupted || got.Verdict != report.VerdictInterrupted || !strings.Contains(got.Why, "up to then the verdict was fail: failed: client.retry-honoured") {
		t.Errorf("exit %d, verdict %q (%s), want %d and %q", code, got.Verdict, got.Why, exitInterrupted, report.VerdictInterrupted)
	}
	if !strings.Contains(stdout.String(), "fray: verdict INTERRUPTED") || strings.Contains(stdout.String(), "verdict FAIL") {
		t.Errorf("summary:\n%s", stdout.String())
	}
}

// TestDemoFlakyGatewayExitCode: fray demo --profile flaky-gateway exits
// with the code the table gives its verdict, which is fail.
func TestDemoFlakyGatewayExitCode(t *testing.T) {
	rep := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := runFray(t, 60*time.Second, "demo", "--profile", "flaky-gateway", "--report", rep)
	r := readReport(t, rep)
	if r.Verdict != report.VerdictFail || code != verdictCode(r) {
		t.Errorf("exit %d with verdict %s (checks failed: %v), want %d\nstdout:\n%s\nstderr:\n%s", code, r.Verdict, r.ChecksFailed(), verdictCode(r), stdout, stderr)
	}
}

// TestSummarySaysWhereEverythingIs: the summary's last line names the
// files that hold every finding, or the flags that write them.
func TestSummarySaysWhereEverythingIs(t *testing.T) {
	up := emptyUpstream(t)
	dir := t.TempDir()
	rep, page := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.html")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--report", rep, "--html", page}, "  every finding and its evidence: " + rep + " (--report), " + page + " (--html)\n"},
		{nil, "  every finding and its evidence: --report FILE, --html FILE, --trace FILE (any of them) writes them\n"},
	} {
		args := append(append([]string{"run", "--upstream", up.URL + "/mcp", "--quiet"}, tc.args...), "--", "true")
		_, stdout, stderr := runFray(t, 30*time.Second, args...)
		if !strings.HasSuffix(stdout, tc.want) {
			t.Errorf("%v: the summary does not end with %q\nstdout:\n%s\nstderr:\n%s", tc.args, tc.want, stdout, stderr)
		}
	}
}
