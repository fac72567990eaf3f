package main

import (
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/frayproxy/fray/examples/scripted"
	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/report"
)

// writeBaseline writes a baseline listing ids, each under its end's list
// (e2e ones under server:), with profile: before each when profile is not
// "".
func writeBaseline(t *testing.T, profile string, ids ...string) string {
	t.Helper()
	lists := map[string][]string{}
	for _, id := range ids {
		end, _, _ := strings.Cut(id, ".")
		if end == "e2e" {
			end = "server"
		}
		if profile != "" {
			id = profile + ":" + id
		}
		lists[end] = append(lists[end], "  - "+id+"  # known\n")
	}
	var b strings.Builder
	for _, end := range []string{"server", "client"} {
		if len(lists[end]) > 0 {
			b.WriteString(end + ":\n" + strings.Join(lists[end], ""))
		}
	}
	return writeFile(t, filepath.Join(t.TempDir(), "fray-baseline.yml"), b.String())
}

// readChecksJSON reads a checks.json and returns each entry's status by id.
func readChecksJSON(t *testing.T, path string) map[string]string {
	t.Helper()
	b := readFile(t, path)
	var arr []report.ConformanceCheck
	if err := json.Unmarshal(b, &arr); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	out := map[string]string{}
	for _, c := range arr {
		out[c.ID] = c.Status
	}
	return out
}

// TestCheckWithBaseline: the trace of a server that replays another
// stream's event, checked with a baseline: the failures it lists pass the
// build and stay FAILURE in checks.json; a listed check that passed fails
// it; an entry for another profile does not cover the run.
func TestCheckWithBaseline(t *testing.T) {
	tracePath, livePath, code := liveRun(t, "lossy-resume", "run.jsonl", scripted.ReplayForeign)
	if code != exitFindings {
		t.Fatalf("the foreign replay exited %d, want %d: nothing to set aside", code, exitFindings)
	}
	live := comparable(t, livePath)
	var failed, passed []string
	for _, c := range live.Checks {
		switch c.Status {
		case report.StatusFail, report.StatusWarn:
			failed = append(failed, c.ID)
		case report.StatusPass:
			passed = append(passed, c.ID)
		}
	}
	if len(passed) == 0 {
		t.Fatal("no check passed: the fixed case cannot be tried")
	}
	out := t.TempDir()
	for _, tc := range []struct {
		name     string
		baseline string
		wantCode int
		wantErr  string
		status   map[string]string // checks.json entries
	}{
		{"every failure listed", writeBaseline(t, "", failed...), exitOK, "",
			map[string]string{failed[0]: report.ConformanceFailure, report.RunBaselineID: report.ConformanceSuccess, report.RunEvidenceID: report.ConformanceSuccess}},
		{"listed under the run's profile", writeBaseline(t, "lossy-resume", failed...), exitOK, "", nil},
		{"listed under another profile", writeBaseline(t, "polling-server", failed...), exitFindings, "not in the baseline: " + failed[0], nil},
		{"a listed check passed", writeBaseline(t, "", append(failed, passed[0])...), exitFindings, "fixed, remove from",
			map[string]string{passed[0]: report.ConformanceSuccess, report.RunBaselineID: report.ConformanceFailure}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cj := filepath.Join(out, strings.ReplaceAll(tc.name, " ", "-")+".json")
			code, stdout, stderr := runFray(t, quick, "check", tracePath, "--baseline", tc.baseline, "--checks-json", cj)
			if code != tc.wantCode || !strings.Contains(stderr, tc.wantErr) {
				t.Errorf("exit %d, want %d saying %q; stderr:\n%s", code, tc.wantCode, tc.wantErr, stderr)
			}
			if !strings.Contains(stdout, "with baseline "+tc.baseline+": verdict ") {
				t.Errorf("the summary does not give the baselined verdict:\n%s", stdout)
			}
			got := readChecksJSON(t, cj)
			for id, want := range tc.status {
				if got[id] != want {
					t.Errorf("checks.json %s: %q, want %q", id, got[id], want)
				}
			}
		})
	}
}

// TestFinishWithBaseline: the exit code follows the baselined verdict, and
// a baseline never turns an inconclusive run into a pass.
func TestFinishWithBaseline(t *testing.T) {
	failing := report.Report{Schema: 1, Checks: []report.Check{
		{ID: checks.ClientRetryHonoured, Severity: checks.Error, Status: report.StatusFail, Count: 2},
		{ID: checks.ServerPrimingEvent, Severity: checks.Warning, Status: report.StatusPass},
	}}
	failing.Conclude("")
	short := failing
	short.Conclude("no fault fired: nothing the profile selects happened")
	listed := &expected{file: "b.yml", entries: []report.BaselineEntry{{Check: checks.ClientRetryHonoured, Line: 2}}}
	fixed := &expected{file: "b.yml", entries: []report.BaselineEntry{{Check: checks.ClientRetryHonoured, Line: 2}, {Check: checks.ServerPrimingEvent, Line: 3}}}
	for _, tc := range []struct {
		name     string
		r        report.Report
		b        *expected
		allow    bool
		wantCode int
		wantMsg  string
	}{
		{"listed", failing, listed, false, exitOK, ""},
		{"not listed", failing, &expected{file: "b.yml"}, false, exitFindings, "verdict fail (baseline b.yml): failed, not in the baseline: client.retry-honoured (2)"},
		{"fixed", failing, fixed, false, exitFindings, "fixed, remove from b.yml: server.priming-event (line 3)"},
		{"listed, but fray saw too little", short, listed, false, exitInconclusive, "verdict inconclusive (baseline b.yml): no fault fired"},
		{"listed, too little, accepted", short, listed, true, exitOK, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "checks.json")
			var stdout bytes.Buffer
			o := &outputs{paths: map[string]string{"checks-json": path}, stdout: &stdout, summary: &stdout,
				allow: tc.allow, baseline: tc.b}
			err := o.finish(tc.r)
			if code := exitCode(err); code != tc.wantCode || (tc.wantMsg != "" && !strings.Contains(err.Error(), tc.wantMsg)) {
				t.Errorf("finish: %v (exit %d), want exit %d saying %q", err, code, tc.wantCode, tc.wantMsg)
			}
			got := readChecksJSON(t, path)
			if got[checks.ClientRetryHonoured] != report.ConformanceFailure {
				t.Errorf("the listed failure is %q in checks.json, want FAILURE", got[checks.ClientRetryHonoured])
			}
		})
	}
}

// TestChecksJSONToStdout: - is stdout for --checks-json too, alone there.
func TestChecksJSONToStdout(t *testing.T) {
	tracePath, _, _ := liveRun(t, "lossy-resume", "run.jsonl", scripted.ServerCorrect)
	code, stdout, stderr := runFray(t, quick, "check", tracePath, "--checks-json", "-")
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	var arr []report.ConformanceCheck
	if err := json.Unmarshal([]byte(stdout), &arr); err != nil || len(arr) < len(checks.IDs()) {
		t.Errorf("stdout is not checks.json alone (%v):\n%s", err, stdout)
	}
	if !strings.Contains(stderr, "verdict PASS") {
		t.Errorf("the summary is not on stderr:\n%s", stderr)
	}
}

// TestMergeWithBaseline: fray report merge judges each merged run under
// its own profile: an entry for one profile does not cover the same check
// failing under another.
func TestMergeWithBaseline(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for _, profile := range []string{"lossy-resume", "polling-server"} {
		r := report.Report{Schema: report.SchemaVersion, Profile: profile, Checks: []report.Check{
			{ID: checks.ClientBackoff, Severity: checks.Error, Status: report.StatusFail, Count: 1},
		}}
		r.Conclude("")
		p := filepath.Join(dir, profile+".json")
		if err := report.WriteFile(p, func(w io.Writer) error { return report.WriteJSON(w, r) }); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	one := writeBaseline(t, "lossy-resume", checks.ClientBackoff)
	code, _, stderr := runFray(t, quick, append(append([]string{"report", "merge"}, paths...), "--baseline", one)...)
	if code != exitFindings || !strings.Contains(stderr, "not in the baseline: client.backoff (2; listed only under profile lossy-resume)") {
		t.Errorf("listed under one profile: exit %d, stderr %q", code, stderr)
	}
	both := writeBaseline(t, "", checks.ClientBackoff)
	code, stdout, stderr := runFray(t, quick, append(append([]string{"report", "merge"}, paths...), "--baseline", both, "--checks-json", "-")...)
	if code != exitOK {
		t.Errorf("listed for every profile: exit %d, stderr %q", code, stderr)
	}
	var arr []report.ConformanceCheck
	if err := json.Unmarshal([]byte(stdout), &arr); err != nil {
		t.Errorf("checks.json on stdout: %v\n%s", err, stdout)
	}
}
