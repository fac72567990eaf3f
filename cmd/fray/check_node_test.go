package main

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestCheckMatchesLiveTSPair: the TypeScript SDK pair under lossy-resume,
// run live by fray run with a trace, then the trace checked offline by
// fray check: the same JSON report, timing fields aside, and the same
// exit code.
func TestCheckMatchesLiveTSPair(t *testing.T) {
	node, dir := nodePeers(t, "sdk", "the TypeScript pair was not traced")
	out := t.TempDir()
	tracePath, live, offline := filepath.Join(out, "ts.jsonl.gz"), filepath.Join(out, "live.json"), filepath.Join(out, "offline.json")
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
	code, _, stderr := runFray(t, 30*time.Second, "check", tracePath, "--report", offline)
	if code != liveCode {
		t.Errorf("fray check exited %d, the live run %d; stderr:\n%s", code, liveCode, stderr)
	}
	or := comparable(t, offline)
	if !reflect.DeepEqual(lr, or) {
		lj, _ := json.MarshalIndent(lr, "", " ")
		oj, _ := json.MarshalIndent(or, "", " ")
		t.Errorf("offline report differs from the live one\nlive:\n%s\noffline:\n%s", lj, oj)
	}
	t.Logf("verdict %s; totals %+v", lr.Verdict, lr.Totals)
}
