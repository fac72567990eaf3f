package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/examples/scripted"
	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/report"
	"github.com/frayproxy/fray/proxy/trace"
)

// liveRun runs the scripted pair through `fray proxy` with profile,
// recording a trace and the live report; it returns the trace's path, the
// live report's and the exit code.
func liveRun(t *testing.T, profile, traceName string, fault scripted.ServerFault) (tracePath, livePath string, code int) {
	t.Helper()
	ctx := within(t, 30*time.Second)
	srv := serve(t, scripted.NewServer(scripted.ServerOptions{Fault: fault}))
	dir := t.TempDir()
	tracePath, livePath = filepath.Join(dir, traceName), filepath.Join(dir, "live.json")
	base, stop := startFray(t, ctx, "proxy", "--upstream", srv.URL, "--listen", "127.0.0.1:0", "--profile", profile,
		"--trace", tracePath, "--report", livePath, "--quiet")
	res, err := scripted.RunClient(ctx, scripted.ClientOptions{URL: base + "/mcp", Calls: 6})
	if err != nil {
		t.Logf("client: %v (result %+v)", err, res)
	}
	code, _, stderr := stop()
	if code != exitOK && code != exitFindings && code != exitInconclusive {
		t.Fatalf("fray proxy exited %d:\n%s", code, stderr)
	}
	return tracePath, livePath, code
}

// comparable is a report with its timing fields cleared.
func comparable(t *testing.T, path string) report.Report {
	t.Helper()
	r := readReport(t, path)
	r.DurationMS = 0
	for i := range r.Checks {
		for j := range r.Checks[i].Evidence {
			r.Checks[i].Evidence[j].AtMS = 0
		}
	}
	return r
}

// checkMatchesLive runs fray check on the trace at tracePath and fails t
// unless it exits liveCode and its report is the live one at livePath,
// timing aside. It returns both reports and check's stdout.
func checkMatchesLive(t *testing.T, tracePath, livePath string, liveCode int) (live, off report.Report, stdout string) {
	t.Helper()
	offPath := filepath.Join(t.TempDir(), "offline.json")
	code, stdout, stderr := runFray(t, 30*time.Second, "check", tracePath, "--report", offPath)
	if code != liveCode {
		t.Errorf("fray check exited %d, the live run %d; stderr:\n%s", code, liveCode, stderr)
	}
	live, off = comparable(t, livePath), comparable(t, offPath)
	if !reflect.DeepEqual(live, off) {
		lj, _ := json.MarshalIndent(live, "", " ")
		oj, _ := json.MarshalIndent(off, "", " ")
		t.Errorf("offline report differs from the live one\nlive:\n%s\noffline:\n%s", lj, oj)
	}
	return live, off, stdout
}

// TestCheckMatchesLive: a trace of a live run, checked offline, gives the
// same JSON report (timing aside) and the same exit code, for a pair that
// recovers, for a server that replays another stream's event, and for a
// run whose profile never fired (inconclusive).
func TestCheckMatchesLive(t *testing.T) {
	idle := writeFile(t, filepath.Join(t.TempDir(), "idle.toml"), "[[fault]]\nkind = \"status\"\npath = \"/never\"\nstatus = 500\n")
	for _, tc := range []struct {
		name, profile, trace string
		fault                scripted.ServerFault
		wantCode             int
	}{
		{"correct pair", "lossy-resume", "run.jsonl", scripted.ServerCorrect, exitOK},
		{"foreign replay, gzip", "lossy-resume", "run.jsonl.gz", scripted.ReplayForeign, exitFindings},
		{"no fault fired", idle, "run.jsonl", scripted.ServerCorrect, exitInconclusive},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tracePath, livePath, liveCode := liveRun(t, tc.profile, tc.trace, tc.fault)
			if liveCode != tc.wantCode {
				t.Errorf("the live run exited %d, want %d", liveCode, tc.wantCode)
			}
			live, _, stdout := checkMatchesLive(t, tracePath, livePath, liveCode)
			var failed []string
			for _, c := range live.Checks {
				if c.Status == report.StatusFail {
					failed = append(failed, c.ID)
				}
			}
			t.Logf("live: verdict %s, totals %+v, failed %v", live.Verdict, live.Totals, failed)
			if live.Totals.Resumptions == 0 && tc.wantCode != exitInconclusive {
				t.Errorf("the live run had no resumption: lossy-resume hit nothing, the comparison proves little")
			}
			if !strings.Contains(stdout, strings.TrimSuffix(filepath.Base(tc.profile), ".toml")) {
				t.Errorf("summary does not name the profile:\n%s", stdout)
			}
		})
	}
}

func TestCheckBadTraces(t *testing.T) {
	tracePath, _, _ := liveRun(t, "lossy-resume", "run.jsonl", scripted.ServerCorrect)
	whole := readFile(t, tracePath)
	dir := t.TempDir()
	write := func(name string, b []byte) string { return writeFile(t, filepath.Join(dir, name), string(b)) }
	cut := write("cut.jsonl", whole[:len(whole)*2/3])
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing", []string{"check", filepath.Join(dir, "nope.jsonl")}, "nope.jsonl"},
		{"not a trace", []string{"check", write("report.json", []byte(`{"schema":1}`+"\n"))}, "report.json:1: not a fray trace"},
		{"newer", []string{"check", write("new.jsonl", bytes.Replace(whole, fmt.Appendf(nil, `"fray_trace":%d`, trace.Version), []byte(`"fray_trace":9`), 1))}, "version 9 is newer"},
		{"truncated", []string{"check", cut}, "the last line is cut"},
		{"two files", []string{"check", cut, cut}, "one trace file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if code, _, stderr := runFray(t, quick, tc.args...); code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, want %d; stderr does not say %q:\n%s", code, exitUsage, tc.want, stderr)
			}
		})
	}
	t.Run("partial", func(t *testing.T) {
		code, _, stderr := runFray(t, quick, "check", cut, "--partial")
		if code == exitUsage || !strings.Contains(stderr, "is truncated") || !strings.Contains(stderr, "dropped the incomplete line") {
			t.Errorf("exit %d; stderr:\n%s", code, stderr)
		}
	})
}

// TestCheckOldProfile: a trace whose profile names a check this fray no
// longer knows is still checked, with the severities it has, and fray
// says so.
func TestCheckOldProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.jsonl")
	w, err := trace.Create(path, trace.WriterOptions{Header: trace.Header{Profile: "old", Seed: 3,
		ProfileText: "name = \"old\"\n[checks]\n\"client.gone-check\" = \"error\"\n\"server.priming-event\" = \"off\"\n"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rep := filepath.Join(t.TempDir(), "r.json")
	code, _, stderr := runFray(t, quick, "check", path, "--report", rep)
	// A trace of no traffic: the check runs, and says it saw nothing.
	if code != exitInconclusive || !strings.Contains(stderr, `unknown check "client.gone-check"`) ||
		!strings.Contains(stderr, "no exchange went through fray") {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	r := comparable(t, rep)
	for _, c := range r.Checks {
		if c.ID == "server.priming-event" && c.Severity != checks.Off {
			t.Errorf("server.priming-event severity %q, want the trace's off", c.Severity)
		}
	}
	if r.Profile != "old" || r.Seed != 3 {
		t.Errorf("report profile %q seed %d", r.Profile, r.Seed)
	}
}

// TestCheckMatchesLiveTSPair: the TypeScript SDK pair under lossy-resume,
// run live by fray run with a trace, then the trace checked offline by
// fray check: the same JSON report, timing fields aside, and the same
// exit code.
func TestCheckMatchesLiveTSPair(t *testing.T) {
	node, dir := nodePeers(t, "sdk", "the TypeScript pair was not traced")
	out := t.TempDir()
	tracePath, live := filepath.Join(out, "ts.jsonl.gz"), filepath.Join(out, "live.json")
	liveCode, stdout, stderr := runFray(t, 90*time.Second, append(append([]string{"run"},
		nodeServer(t, node, dir, "streamable-server.mjs", "--retry-interval", "100")...),
		"--profile", "lossy-resume", "--trace", tracePath, "--report", live, "--quiet",
		"--", node, filepath.Join(dir, "fray-run-client.mjs"), "--count", "8", "--close-after", "0", "--delay-ms", "15")...)
	lr := comparable(t, live)
	if lr.Command == nil || lr.Command.ExitCode != 0 {
		t.Fatalf("the TypeScript client failed through fray (exit %d)\nstdout:\n%s\nstderr:\n%s", liveCode, stdout, stderr)
	}
	if lr.Totals.Resumptions == 0 {
		t.Fatalf("lossy-resume cut no stream of the TypeScript pair: nothing recovered, the comparison proves little\n%s", stdout)
	}
	checkMatchesLive(t, tracePath, live, liveCode)
	t.Logf("verdict %s; totals %+v", lr.Verdict, lr.Totals)
}
