package main

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/examples/gosdk/refpeer"
	"github.com/frayproxy/fray/examples/scripted"
	"github.com/frayproxy/fray/profiles/sweep"
)

// TestSweepClientHelper is the client of the sweep and shrink tests when
// FRAY_SWEEP_CLIENT says which scripted client misbehaviour it has (0: a
// correct client) and FRAY_SWEEP_CALLS how many tool calls it makes. It
// exits 1 when its calls did not complete within FRAY_SWEEP_WAIT (a
// duration; 15s when not set), leaving without a word as a killed client
// would.
func TestSweepClientHelper(t *testing.T) {
	fault, ok := os.LookupEnv("FRAY_SWEEP_CLIENT")
	if !ok {
		t.Skip("a helper process for the sweep tests, not a test")
	}
	n, _ := strconv.Atoi(fault)
	calls, _ := strconv.Atoi(os.Getenv("FRAY_SWEEP_CALLS"))
	wait, err := time.ParseDuration(os.Getenv("FRAY_SWEEP_WAIT"))
	if err != nil {
		wait = 15 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	res, err := scripted.RunClient(ctx, scripted.ClientOptions{
		URL: os.Getenv("FRAY_URL"), Calls: calls, Fault: scripted.ClientFault(n),
		Backoff: 50 * time.Millisecond, MaxAttempts: 4, Idle: 500 * time.Millisecond,
	})
	fmt.Printf("completed %d\n", res.Completed)
	helperExit(err)
}

// sweepClient is the helper client command, with its misbehaviour and
// number of calls.
func sweepClient(t *testing.T, fault scripted.ClientFault, calls int) []string {
	t.Helper()
	return helperArgs(t, "TestSweepClientHelper", "FRAY_SWEEP_CLIENT", strconv.Itoa(int(fault)),
		"FRAY_SWEEP_CALLS", strconv.Itoa(calls), "FRAY_SWEEP_WAIT", "")
}

// TestSweepSilentResumption sweeps a correct client in front of a scripted
// server whose resumed streams fall silent: every cell that makes the
// client resume fails on the server, the others pass, and the matrix, the
// JSON report and the JUnit file say the same of every cell.
func TestSweepSilentResumption(t *testing.T) {
	up := serve(t, scripted.NewServer(scripted.ServerOptions{Fault: scripted.SilentResume, Steps: 2}))
	client := sweepClient(t, scripted.ClientCorrect, 1)
	// A silent stream's keep-alives keep the client waiting: 1.5s ends
	// its wait, more than the second fray gives a resumed stream before
	// it holds its silence against the server.
	t.Setenv("FRAY_SWEEP_WAIT", "1500ms")
	dir := t.TempDir()
	js, junit := filepath.Join(dir, "s.json"), filepath.Join(dir, "s.xml")
	code, stdout, stderr := runFray(t, 90*time.Second, append([]string{"sweep", "--upstream", up.URL + "/mcp",
		"--settle", "100ms", "--max-events", "1", "--max-runs", "8", "--dir", filepath.Join(dir, "cells"), "--report", js, "--junit", junit,
		"--html", filepath.Join(dir, "index.html"), "--"}, client...)...)
	if code != exitFindings {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitFindings, stdout, stderr)
	}
	cells := sweepOutputsAgree(t, stdout, js, junit)
	if len(cells) != 8 || !strings.Contains(stdout, "4 more cells left out by --max-runs") {
		t.Errorf("%d cells, want 8 and 4 left out:\n%s", len(cells), stdout)
	}
	resumed := 0
	for name, v := range cells {
		// A client resumes once an event id reached it, and the server
		// did not already answer.
		resumes := !strings.Contains(name, "before any event") && !strings.Contains(name, "after the response") && strings.HasPrefix(name, "tools/call")
		switch {
		case resumes && !strings.HasPrefix(v, "FAIL server."):
			t.Errorf("%s: %s, want a server check's failure", name, v)
		case resumes:
			resumed++
		}
	}
	if resumed == 0 {
		t.Errorf("no cell made the client resume:\n%s", stdout)
	}
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil || !strings.Contains(string(page), `href="cells/cell-`) {
		t.Errorf("index page: %v\n%.400s", err, page)
	}
	if !strings.Contains(stdout, "reproduce tools/call") || !strings.Contains(stdout, "--reproduce "+filepath.Join(dir, "cells")) {
		t.Errorf("no reproduce line:\n%s", stdout)
	}
}

// matrixColumns splits a line of the matrix: at least two spaces between
// columns, at most one inside a cell.
var matrixColumns = regexp.MustCompile(` {2,}`)

// sweepOutputsAgree reads a sweep's matrix, JSON report and JUnit file,
// fails the test where they disagree about a cell, and returns cell name
// to its verdict and check, as the matrix shows it.
func sweepOutputsAgree(t *testing.T, matrix, jsPath, junitPath string) map[string]string {
	t.Helper()
	fromMatrix := map[string]string{}
	lines := strings.Split(matrix, "\n")
	head := matrixColumns.Split(lines[0], -1)
	for _, l := range lines[1:] {
		if f := matrixColumns.Split(l, -1); len(f) == len(head) {
			for i := 1; i < len(f); i++ {
				if f[i] != "-" {
					fromMatrix[f[0]+", "+head[i]] = f[i]
				}
			}
		}
	}
	var j struct {
		Cells []struct{ Stream, Point, Mode, Verdict, Check string }
	}
	b, err := os.ReadFile(jsPath)
	if err != nil || json.Unmarshal(b, &j) != nil {
		t.Fatalf("--report: %v\n%s", err, b)
	}
	var x struct {
		Cases []struct {
			Class   string `xml:"classname,attr"`
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
			} `xml:"failure"`
			Skipped *struct{} `xml:"skipped"`
		} `xml:"testsuite>testcase"`
	}
	if b, err = os.ReadFile(junitPath); err != nil || xml.Unmarshal(b, &x) != nil {
		t.Fatalf("--junit: %v\n%s", err, b)
	}
	if len(j.Cells) != len(fromMatrix) || len(x.Cases) != len(fromMatrix) {
		t.Errorf("cells: matrix %d, JSON %d, JUnit %d", len(fromMatrix), len(j.Cells), len(x.Cases))
	}
	for _, c := range j.Cells {
		k := c.Stream + ", " + c.Point + ", " + c.Mode
		if v := (sweep.Outcome{Verdict: c.Verdict, Check: c.Check}).Short(); fromMatrix[k] != v {
			t.Errorf("%s: matrix %q, JSON %q", k, fromMatrix[k], v)
		}
	}
	for _, c := range x.Cases {
		v := "pass"
		switch {
		case c.Failure != nil:
			v = c.Failure.Message
		case c.Skipped != nil:
			v = "inconclusive"
		}
		if k := strings.TrimPrefix(c.Class, "fray.sweep.") + ", " + c.Name; fromMatrix[k] != v {
			t.Errorf("%s: matrix %q, JUnit %q", k, fromMatrix[k], v)
		}
	}
	return fromMatrix
}

// TestSweepGoSDKPair sweeps the official Go SDK's pair (examples/gosdk,
// v1.8.0 in go.mod): at least 12 cells; the cells that cut a stream
// after an event id reached the client and let it resume pass, and the
// 503 answered to a resumption gives the call up (go-sdk#683), which the
// cell names by its cause, client.retries-transient.
func TestSweepGoSDKPair(t *testing.T) {
	if testing.Short() {
		t.Skip("a sweep of a real pair: about 30 s")
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", refpeer.NewHandler(refpeer.ServerOptions{RetryAfter: refpeer.DefaultRetryAfter}))
	up := serve(t, mux)
	args := probeClient(t, "gosdk")
	dir := t.TempDir()
	js, junit := filepath.Join(dir, "s.json"), filepath.Join(dir, "s.xml")
	code, stdout, stderr := runFray(t, 120*time.Second, append([]string{"sweep", "--upstream", up.URL + "/mcp",
		"--settle", "100ms", "--max-events", "1", "--dir", filepath.Join(dir, "cells"), "--report", js, "--junit", junit, "--"}, args...)...)
	if code != exitFindings {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitFindings, stdout, stderr)
	}
	t.Logf("the matrix:\n%s", stdout)
	cells := sweepOutputsAgree(t, stdout, js, junit)
	if len(cells) < 12 {
		t.Errorf("%d cells, want at least 12:\n%s", len(cells), stdout)
	}
	for name, v := range cells {
		call := strings.HasPrefix(name, "tools/call slow-count, ")
		switch {
		case call && strings.HasSuffix(name, "resume-503") && v != "FAIL client.retries-transient":
			t.Errorf("%s: %s, want client.retries-transient (go-sdk#683)", name, v)
		case call && strings.Contains(name, "after the priming event") && !strings.HasSuffix(name, "resume-503") && v != "pass":
			t.Errorf("%s: %s, want a pass: the client resumes", name, v)
		}
	}
}
