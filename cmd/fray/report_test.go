package main

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/examples/scripted"
	"github.com/frayproxy/fray/proxy/report"
)

// TestReportHTML draws the trace of a run whose server replays another stream's event:
// the page holds the lanes and the failed check with its evidence.
func TestReportHTML(t *testing.T) {
	tracePath, _, _ := liveRun(t, "lossy-resume", "run.jsonl.gz", scripted.ReplayForeign)
	page := filepath.Join(t.TempDir(), "run.html")
	if code, _, stderr := runFray(t, quick, "report", tracePath, "--html", page); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b := readFile(t, page)
	html := string(b)
	for _, want := range []string{`"check":"server.replay-isolated"`, `"status":"fail"`, `"profile":"lossy-resume"`, `"lanes":[{"ex":1,`} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if regexp.MustCompile(`(?i)<script[^>]+src=|<link[^>]+href=`).MatchString(html) {
		t.Error("page loads something from elsewhere")
	}
	code, _, stderr := runFray(t, quick, "report", tracePath)
	if code != exitUsage || !strings.Contains(stderr, "--html FILE") {
		t.Errorf("without --html: exit %d, %s", code, stderr)
	}
}

// TestReportMerge merges a passing and a failing report: the verdict and
// the exit code are the failing one's.
func TestReportMerge(t *testing.T) {
	_, pass, _ := liveRun(t, "lossy-resume", "a.jsonl", scripted.ServerCorrect)
	_, fail, _ := liveRun(t, "lossy-resume", "b.jsonl", scripted.ReplayForeign)
	out := filepath.Join(t.TempDir(), "merged.json")
	code, _, stderr := runFray(t, quick, "report", "merge", pass, fail, "--report", out)
	if code != exitFindings {
		t.Errorf("exit %d, want %d: %s", code, exitFindings, stderr)
	}
	r := readReport(t, out)
	if r.Verdict != report.VerdictFail || r.Merged != 2 {
		t.Errorf("merged verdict %q of %d reports", r.Verdict, r.Merged)
	}
	code, _, stderr = runFray(t, quick, "report", "merge", pass, filepath.Join(t.TempDir(), "nope.json"))
	if code != exitUsage || !strings.Contains(stderr, "nope.json") {
		t.Errorf("merging a missing file: exit %d, %s", code, stderr)
	}
}

// TestReplayCommand replays a recorded run of the scripted pair to a fresh
// scripted client: it resumes from the same ids as live.
func TestReplayCommand(t *testing.T) {
	ctx := within(t, 30*time.Second)
	srvTrace, _, _ := liveRun(t, "lossy-resume", "run.jsonl", scripted.ServerCorrect)
	live := resumesIn(t, srvTrace)

	addr, stop := startFray(t, ctx, "replay", srvTrace, "--listen", "127.0.0.1:0", "--speed", "4")
	res, err := scripted.RunClient(ctx, scripted.ClientOptions{URL: addr + "/mcp", Calls: 6})
	code, _, out := stop()
	if code != exitOK {
		t.Errorf("fray replay exited %d: %s", code, out)
	}
	if err != nil {
		t.Fatalf("client against the replay: %v\n%s", err, out)
	}
	if !slices.Equal(res.Resumes, live) || res.Completed != 6 {
		t.Errorf("replayed client completed %d calls, resumed from %q; live resumed from %q\n%s", res.Completed, res.Resumes, live, out)
	}
	if !strings.Contains(out, "(0 unmatched)") {
		t.Errorf("requests went unmatched: %s", out)
	}
}

// resumesIn lists the Last-Event-IDs of the trace's reconnections.
func resumesIn(t *testing.T, path string) []string {
	t.Helper()
	b := readFile(t, path)
	var out []string
	for _, m := range regexp.MustCompile(`"stream":"resume"[^\n]*"request":\{[^\n]*?"last_event_id":"([^"]*)"`).FindAllStringSubmatch(string(b), -1) {
		out = append(out, m[1])
	}
	if len(out) == 0 {
		t.Fatal("the live run never resumed")
	}
	return out
}

// TestReplayThroughProfile replays what the server sent through fray with
// another profile: here one that only adds latency to POSTs, so the
// client finishes every call.
func TestReplayThroughProfile(t *testing.T) {
	ctx := within(t, 30*time.Second)
	srvTrace, _, _ := liveRun(t, "lossy-resume", "run.jsonl", scripted.ServerCorrect)
	prof := writeFile(t, filepath.Join(t.TempDir(), "slow.toml"), "[[fault]]\nkind = \"latency\"\nmethod = \"POST\"\ndelay = \"5ms\"\n")
	addr, stop := startFray(t, ctx, "replay", srvTrace, "--listen", "127.0.0.1:0", "--speed", "0", "--faults", prof)
	start := time.Now()
	res, err := scripted.RunClient(ctx, scripted.ClientOptions{URL: addr + "/mcp", Calls: 6})
	took := time.Since(start)
	code, _, out := stop()
	if code != exitOK {
		t.Errorf("fray replay exited %d: %s", code, out)
	}
	if err != nil || res.Completed != 6 {
		t.Fatalf("client against the replay through fray: %v, %+v\n%s", err, res, out)
	}
	// Every POST waited 5ms in fray: the profile acted.
	if took < 5*time.Millisecond*time.Duration(6) {
		t.Errorf("6 calls took %v: the latency profile did not act", took)
	}
}
