package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/examples/scripted"
	"github.com/frayproxy/fray/profiles"
)

// flakySeed is a seed at which flaky-gateway at random (randomFlakyGateway),
// on the scripted pair of TestShrinkFlakyGateway, resets a call's stream
// and answers its resumption 503 (the test checks that the recorded run
// failed so).
const flakySeed = "5"

// randomFlakyGateway writes flaky-gateway without its first = true lines
// to dir: each fault acts at random from the first opportunity on, as a
// long random run meets them, so that the failing run has more firings
// than the cause needs.
func randomFlakyGateway(t *testing.T, dir string) string {
	t.Helper()
	p, err := profiles.Builtin("flaky-gateway")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(p.Text), "\nfirst = true\n", "\n")
	if text == string(p.Text) {
		t.Fatal("flaky-gateway has no first = true line to take out")
	}
	return writeFile(t, filepath.Join(dir, "flaky-gateway-random.toml"), text)
}

// TestShrinkFlakyGateway records a run of flaky-gateway (its faults at
// random from the first opportunity on) that fails on a
// client that gives a call up at a transient error on its resumption,
// shrinks it, and runs the profile shrink printed: at most two firings,
// and the same check fails again.
func TestShrinkFlakyGateway(t *testing.T) {
	up := serve(t, scripted.NewServer(scripted.ServerOptions{Steps: 2}))
	client := sweepClient(t, scripted.GiveUpOnTransient, 40)
	dir := t.TempDir()
	tr, js := filepath.Join(dir, "run.jsonl.gz"), filepath.Join(dir, "run.json")
	code, stdout, stderr := runFray(t, 60*time.Second, append([]string{"run", "--upstream", up.URL + "/mcp", "--settle", "100ms",
		"--profile", randomFlakyGateway(t, dir), "--seed", flakySeed, "--trace", tr, "--report", js, "--"}, client...)...)
	if code != exitFindings || !strings.Contains(stdout, "client.retries-transient") {
		t.Fatalf("the recorded run: exit %d, want %d with client.retries-transient failed\nstdout:\n%s\nstderr:\n%s", code, exitFindings, stdout, stderr)
	}
	in, err := readShrinkInput(tr)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.run.Firings) <= 2 {
		t.Fatalf("the recorded run fired %d faults: nothing to shrink", len(in.run.Firings))
	}
	out := filepath.Join(dir, "shrunk.toml")
	code, stdout, stderr = runFray(t, 60*time.Second, append([]string{"shrink", "--reproduce", tr, "--upstream", up.URL + "/mcp",
		"--settle", "100ms", "--out", out, "--"}, client...)...)
	if code != exitOK {
		t.Fatalf("shrink: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	t.Logf("shrink of %d firings:\n%s%s", len(in.run.Firings), stdout, stderr)
	text := readFile(t, out)
	if n := strings.Count(string(text), "[[fault]]"); n == 0 || n > 2 || !strings.Contains(stdout, string(text)) {
		t.Errorf("shrunk to %d faults, want 1 or 2; printed:\n%s\nwritten:\n%s", n, stdout, text)
	}
	if !strings.Contains(stdout, "fray run --upstream "+up.URL+"/mcp --profile "+out+" -- ") {
		t.Errorf("no command to run it:\n%s", stdout)
	}
	if _, err := profiles.Parse(out, bytes.NewReader(text)); err != nil {
		t.Fatal(err)
	}
	// The shrunk profile fails the same check again.
	code, stdout, stderr = runFray(t, 60*time.Second, append([]string{"run", "--upstream", up.URL + "/mcp", "--settle", "100ms",
		"--profile", out, "--report", js, "--"}, client...)...)
	b, _ := os.ReadFile(js)
	if code != exitFindings || !strings.Contains(stdout, "client.retries-transient") {
		t.Errorf("the shrunk profile: exit %d, want %d with client.retries-transient failed\nstdout:\n%s\nstderr:\n%s\n%.300s", code, exitFindings, stdout, stderr, b)
	}
}
