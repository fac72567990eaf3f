package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/examples/scripted"
	"github.com/frayproxy/fray/proxy/trace"
)

// TestScriptedClientHelper acts as the scripted MCP client on $FRAY_URL
// when FRAY_TEST_SCRIPTED_CLIENT is set: the client command of the fray
// run tests below.
func TestScriptedClientHelper(t *testing.T) {
	if os.Getenv("FRAY_TEST_SCRIPTED_CLIENT") == "" {
		t.Skip("a helper process for the fray run --trace tests, not a test")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := scripted.RunClient(ctx, scripted.ClientOptions{URL: os.Getenv("FRAY_URL"), Calls: 6})
	if err == nil {
		fmt.Printf("completed %d, resumed from %q\n", res.Completed, res.Resumes)
	}
	helperExit(err)
}

// traceFirings lists the faults that fired in a trace, each with the exchange
// and the event it hit.
func traceFirings(t *testing.T, path string) (out []string, resumes []string) {
	t.Helper()
	tr, err := trace.ReadFile(path, trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range tr.Observations {
		for _, f := range o.Fired {
			idx := -1
			if o.Event != nil {
				idx = o.Event.Index
			}
			out = append(out, fmt.Sprintf("%s@%d/%s/%d", f.Kind, o.Exchange, o.Stream, idx))
		}
		if o.Request != nil && o.Request.HasLastEventID {
			resumes = append(resumes, o.Request.LastEventID)
		}
	}
	return out, resumes
}

// TestRunTraceCheckAndReproduce: a trace recorded by fray run checks
// offline to the live report (the client command included), and fray run
// --reproduce meets the same faults again with the profile and seed the
// trace holds.
func TestRunTraceCheckAndReproduce(t *testing.T) {
	srv := serve(t, scripted.NewServer(scripted.ServerOptions{Fault: scripted.ReplayForeign}))
	client := helperArgs(t, "TestScriptedClientHelper", "FRAY_TEST_SCRIPTED_CLIENT", "1")
	dir := t.TempDir()
	t1, r1 := filepath.Join(dir, "t1.jsonl.gz"), filepath.Join(dir, "r1.json")
	code, _, stderr := runFray(t, 60*time.Second, append([]string{"run", "--upstream", srv.URL + "/mcp",
		"--profile", "lossy-resume", "--seed", "7", "--trace", t1, "--report", r1, "--quiet", "--"}, client...)...)
	if code != exitFindings {
		t.Fatalf("fray run exited %d, want %d (the server replays another stream's event); stderr:\n%s", code, exitFindings, stderr)
	}
	if _, offline, _ := checkMatchesLive(t, t1, r1, exitFindings); offline.Command == nil {
		t.Errorf("the offline report has no client command: %+v", offline)
	}

	srv2 := serve(t, scripted.NewServer(scripted.ServerOptions{Fault: scripted.ReplayForeign}))
	t2 := filepath.Join(dir, "t2.jsonl")
	code, _, stderr = runFray(t, 60*time.Second, append([]string{"run", "--upstream", srv2.URL + "/mcp",
		"--reproduce", t1, "--trace", t2, "--quiet", "--"}, client...)...)
	if code != exitFindings {
		t.Errorf("fray run --reproduce exited %d; stderr:\n%s", code, stderr)
	}
	f1, res1 := traceFirings(t, t1)
	f2, res2 := traceFirings(t, t2)
	if len(f1) == 0 || !slices.Equal(f1, f2) || !slices.Equal(res1, res2) {
		t.Errorf("reproduced run met other faults:\nfirst  %v resumed %q\nsecond %v resumed %q", f1, res1, f2, res2)
	}
	h2, err := trace.Open(t2, trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close()
	if h := h2.Header(); h.Profile != "lossy-resume" || h.Seed != 7 {
		t.Errorf("reproduced run's profile %q seed %d, want lossy-resume seed 7", h.Profile, h.Seed)
	}
	code, _, stderr = runFray(t, 10*time.Second, "run", "--upstream", srv2.URL, "--reproduce", t1, "--profile", "soak", "--", "true")
	if code != exitUsage {
		t.Errorf("--reproduce with --profile: exit %d, want %d: %s", code, exitUsage, stderr)
	}
}

// TestRunDrawsTheTimeline: --html alone draws the run's timeline when fray
// run stops, from a temporary trace it then removes.
func TestRunDrawsTheTimeline(t *testing.T) {
	srv := serve(t, scripted.NewServer(scripted.ServerOptions{}))
	tmp := t.TempDir()
	client := helperArgs(t, "TestScriptedClientHelper", "FRAY_TEST_SCRIPTED_CLIENT", "1", "TMPDIR", tmp)
	page := filepath.Join(t.TempDir(), "run.html")
	code, _, stderr := runFray(t, 60*time.Second, append([]string{"run", "--upstream", srv.URL + "/mcp",
		"--profile", "lossy-resume", "--seed", "7", "--html", page, "--quiet", "--"}, client...)...)
	if code != exitOK || !strings.Contains(stderr, "timeline of the run written to "+page) {
		t.Fatalf("fray run --html exited %d; stderr:\n%s", code, stderr)
	}
	b := readFile(t, page)
	for _, want := range []string{`"profile":"lossy-resume"`, `"lanes":[{"ex":1,`, `"verdict":"pass"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "fray-*.jsonl")); len(left) > 0 {
		t.Errorf("the temporary trace was left behind: %v", left)
	}
}
