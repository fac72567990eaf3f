package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/examples/scripted"
	"github.com/frayproxy/fray/proxy/report"
)

// TestRunServerPortTaken: with --server, fray run refuses an upstream
// address that already accepts connections before the server command
// runs, naming the address and what to do, and never runs the command.
func TestRunServerPortTaken(t *testing.T) {
	stale := emptyUpstream(t)
	addr := stale.Listener.Addr().String()
	code, stdout, stderr := runFray(t, 30*time.Second, "run", "--upstream", stale.URL+"/mcp",
		"--server", "echo SERVER-OUTPUT", "--quiet", "--", "true")
	if code != exitNoStart || !strings.Contains(stderr, addr+" already accepts connections") ||
		!strings.Contains(stderr, "stop the process that holds "+addr) || !strings.Contains(stderr, "drop --server") {
		t.Errorf("exit %d, want %d naming %s, the process to stop and --server to drop; stderr:\n%s", code, exitNoStart, addr, stderr)
	}
	if strings.Contains(stderr, "server: SERVER-OUTPUT") || strings.Contains(stdout, "verdict") {
		t.Errorf("the server command ran, or a verdict was given\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
}

// TestRunServerDiesDuringRun: a --server command that exits while the
// client runs stops the client and fails the run with its own code,
// after the reports are written.
func TestRunServerDiesDuringRun(t *testing.T) {
	port := freePort(t)
	args := helperClient(t, "FRAY_TEST_HOLD", "1")
	server := fmt.Sprintf("FRAY_TEST_HELPER=server FRAY_TEST_DIE=1 FRAY_TEST_PORT=%d exec %s %s", port, args[0], args[1])
	code, stdout, stderr, r := runReported(t, 30*time.Second, append([]string{"run",
		"--upstream", fmt.Sprintf("http://127.0.0.1:%d/mcp", port), "--server", server,
		"--settle", "0s", "--"}, args...)...)
	if code != exitNoStart || !strings.Contains(stderr, "exited (exit status 9) while the run went on") {
		t.Errorf("exit %d, want %d saying the server exited during the run\nstdout:\n%s\nstderr:\n%s", code, exitNoStart, stdout, stderr)
	}
	if r.Command == nil || !strings.Contains(r.Command.Error, "the --server command exited while the client ran") {
		t.Errorf("report command %+v, want the client stopped for the server's exit", r.Command)
	}
}

// TestRunClientTimeout: --client-timeout stops a client that runs too
// long; the client failed, and the report says why.
func TestRunClientTimeout(t *testing.T) {
	up := emptyUpstream(t)
	client := helperClient(t, "FRAY_TEST_HOLD", "1")
	code, stdout, stderr, r := runReported(t, 30*time.Second, append([]string{"run", "--upstream", up.URL + "/mcp",
		"--client-timeout", "300ms", "--settle", "0s", "--"}, client...)...)
	if code != exitCommand || r.Command == nil || !strings.Contains(r.Command.Error, "ran longer than --client-timeout 300ms") {
		t.Errorf("exit %d, command %+v; want %d and the timeout named\nstdout:\n%s\nstderr:\n%s", code, r.Command, exitCommand, stdout, stderr)
	}
	code, _, stderr = runFray(t, quick, "run", "--upstream", up.URL, "--client-timeout", "0s", "--", "true")
	if code != exitUsage || !strings.Contains(stderr, "--client-timeout 0s: must be positive") {
		t.Errorf("--client-timeout 0s: exit %d, stderr %q", code, stderr)
	}
}

// TestRunProbeProgress: fray run --probe says which probe starts, as
// "probe 2/2: NAME", and its row as it ends; --client-timeout bounds each
// probe's client.
func TestRunProbeProgress(t *testing.T) {
	up := serve(t, scripted.NewServer(scripted.ServerOptions{}))
	client := helperClient(t, "FRAY_TEST_HOLD", "1")
	code, stdout, stderr, r := runReported(t, 60*time.Second, append([]string{"run", "--probe", "no-last-event-id,retry-not-waited",
		"--upstream", up.URL + "/mcp", "--settle", "0s", "--client-timeout", "300ms", "--"}, client...)...)
	if code == exitUsage {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	var order []int
	for _, want := range []string{
		"fray: probe 1/2: no-last-event-id\n", "fray: probe 1/2: no-last-event-id  client  ",
		"fray: probe 2/2: retry-not-waited\n", "fray: probe 2/2: retry-not-waited  client  ",
	} {
		i := strings.Index(stderr, want)
		if i < 0 {
			t.Fatalf("stderr does not say %q:\n%s", want, stderr)
		}
		order = append(order, i)
	}
	if !slices.IsSorted(order) {
		t.Errorf("the probes' lines are out of order:\n%s", stderr)
	}
	for i, s := range r.Shards {
		if s.Command == nil || !strings.Contains(s.Command.Error, "--client-timeout 300ms") {
			t.Errorf("probe %d: command %+v, want it stopped by --client-timeout\nstdout:\n%s", i+1, s.Command, stdout)
		}
	}
	if len(r.Shards) != 2 {
		t.Errorf("%d shards, want 2", len(r.Shards))
	}
}

// TestRunInterrupted: a run stopped by SIGINT writes its reports whole,
// with the verdict interrupted, not fail, and exits 130.
func TestRunInterrupted(t *testing.T) {
	up := emptyUpstream(t)
	client := helperClient(t, "FRAY_TEST_INTERRUPT", "1", "FRAY_TEST_HOLD", "1")
	code, stdout, stderr, r := runReported(t, 30*time.Second, append([]string{"run", "--upstream", up.URL + "/mcp",
		"--settle", "0s", "--"}, client...)...)
	if code != exitInterrupted || r.Verdict != report.VerdictInterrupted || !strings.Contains(stdout, "fray: verdict INTERRUPTED") ||
		strings.Contains(stdout, "verdict FAIL") {
		t.Errorf("exit %d, verdict %q (%s), want %d and interrupted\nstdout:\n%s\nstderr:\n%s", code, r.Verdict, r.Why, exitInterrupted, stdout, stderr)
	}
}
