package main

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/report"
)

// The test binary doubles as the client and the server of fray run:
// TestHelperProcess acts as one when FRAY_TEST_HELPER says so.
//
//	client: GETs $FRAY_URL, prints "STATUS BODY", exits $FRAY_TEST_EXIT
//	        (with FRAY_TEST_HOLD set, waits to be stopped instead; with
//	        FRAY_TEST_INTERRUPT set, sends fray SIGINT first)
//	server: serves "upstream PATH?QUERY" on 127.0.0.1:$FRAY_TEST_PORT, prints its pid
//	        (with FRAY_TEST_DIE set, exits 9 once its first answer is sent)
func TestHelperProcess(t *testing.T) {
	switch os.Getenv("FRAY_TEST_HELPER") {
	case "client":
		resp, err := http.Get(os.Getenv("FRAY_URL"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(10)
		}
		b, _ := io.ReadAll(resp.Body)
		fmt.Printf("%d %s\n", resp.StatusCode, b)
		if os.Getenv("FRAY_TEST_INTERRUPT") != "" {
			// As Ctrl-C would: fray, the parent, gets SIGINT.
			if err := syscall.Kill(os.Getppid(), syscall.SIGINT); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(11)
			}
		}
		if os.Getenv("FRAY_TEST_HOLD") != "" {
			select {} // until fray stops it
		}
		code, _ := strconv.Atoi(os.Getenv("FRAY_TEST_EXIT"))
		os.Exit(code)
	case "server":
		fmt.Printf("pid %d\n", os.Getpid())
		srv := &http.Server{Addr: "127.0.0.1:" + os.Getenv("FRAY_TEST_PORT"), Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if os.Getenv("FRAY_TEST_DIE") != "" {
				w.Header().Set("Connection", "close")
			}
			fmt.Fprintf(w, "upstream %s", r.URL.RequestURI())
		})}
		if os.Getenv("FRAY_TEST_DIE") != "" {
			// Dies once its first answer's connection is closed.
			srv.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateClosed {
					os.Exit(9)
				}
			}
		}
		err := srv.ListenAndServe()
		fmt.Fprintln(os.Stderr, err)
		os.Exit(10)
	default:
		t.Skip("a helper process for the fray run tests, not a test")
	}
}

// helperArgs sets env (name, value pairs) and returns the command line
// that runs this binary as the helper process test.
func helperArgs(t *testing.T, test string, env ...string) []string {
	t.Helper()
	for i := 0; i+1 < len(env); i += 2 {
		t.Setenv(env[i], env[i+1])
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe, "-test.run=^" + test + "$"}
}

// helperClient makes TestHelperProcess the client, with env (name, value
// pairs) set, and returns its command line.
func helperClient(t *testing.T, env ...string) []string {
	t.Helper()
	return helperArgs(t, "TestHelperProcess", append([]string{"FRAY_TEST_HELPER", "client"}, env...)...)
}

// serve serves h on a loopback port until the test ends.
func serve(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	up := httptest.NewServer(h)
	t.Cleanup(func() {
		up.CloseClientConnections()
		up.Close()
	})
	return up
}

// emptyUpstream answers every request 200 with nothing, until the test
// ends.
func emptyUpstream(t *testing.T) *httptest.Server {
	return serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
}

// freePort returns a loopback port nobody listened on a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// runFray runs the command line in-process, bounded by timeout.
func runFray(t *testing.T, timeout time.Duration, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var out, errb syncBuffer
	code = run(ctx, append([]string{"fray"}, args...), &out, &errb)
	if ctx.Err() != nil {
		t.Fatalf("fray %v did not finish within %s; stderr:\n%s", args, timeout, errb.String())
	}
	return code, out.String(), errb.String()
}

// within returns a context that ends after d or with the test.
func within(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func readReport(t *testing.T, path string) report.Report {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := report.ReadJSON(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return r
}

// runReported runs fray with args (a command, then its arguments), adding
// --quiet and --report to a file of the test's, and returns what runFray
// returns and the report.
func runReported(t *testing.T, timeout time.Duration, args ...string) (code int, stdout, stderr string, r report.Report) {
	t.Helper()
	rep := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr = runFray(t, timeout, append([]string{args[0], "--report", rep, "--quiet"}, args[1:]...)...)
	return code, stdout, stderr, readReport(t, rep)
}

// verdictCode is the exit code a report's verdict asks for: 1 when a
// check failed, 3 when only the client command failed, 4 when
// inconclusive, 0 for a pass.
func verdictCode(r report.Report) int {
	switch {
	case r.Verdict == report.VerdictFail && r.ChecksFailed():
		return exitFindings
	case r.Verdict == report.VerdictFail:
		return exitCommand
	case r.Verdict == report.VerdictInconclusive && !r.Accepted:
		return exitInconclusive
	}
	return exitOK
}

// TestRunServerAndClient runs a --server and a client, both this binary:
// FRAY_URL keeps the upstream's path and query, the client's request
// reaches the server through fray, the exit code is the verdict's, and the
// server's process is gone afterwards.
func TestRunServerAndClient(t *testing.T) {
	port := freePort(t)
	args := helperClient(t, "FRAY_TEST_EXIT", "0")
	server := fmt.Sprintf("FRAY_TEST_HELPER=server FRAY_TEST_PORT=%d exec %s %s", port, args[0], args[1])
	code, stdout, stderr, r := runReported(t, 30*time.Second, append([]string{"run",
		"--upstream", fmt.Sprintf("http://127.0.0.1:%d/mcp?x=1", port), "--server", server, "--"}, args...)...)
	if code != verdictCode(r) {
		t.Errorf("exit %d with verdict %q; stderr:\n%s", code, r.Verdict, stderr)
	}
	if !strings.Contains(stdout, "200 upstream /mcp?x=1\n") {
		t.Errorf("the client did not reach the server's /mcp?x=1 through fray; stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	if r.Command == nil || r.Command.ExitCode != 0 || r.Command.Args[0] != args[0] {
		t.Errorf("report command %+v", r.Command)
	}
	if !strings.Contains(stderr, "FRAY_URL=http://127.0.0.1:") || !strings.Contains(stderr, "/mcp?x=1 -> ") {
		t.Errorf("start line does not show FRAY_URL:\n%s", stderr)
	}
	pidLine := strings.Fields(stderr[strings.Index(stderr, "server: pid "):])
	pid, err := strconv.Atoi(pidLine[2])
	if err != nil {
		t.Fatalf("no server pid in stderr:\n%s", stderr)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the server (pid %d) is still there after fray run: %v", pid, err)
	}
}

// TestRunClientFails: a client that exits non-zero, or cannot start at
// all, gives exit code 3, with its exit code in the report.
func TestRunClientFails(t *testing.T) {
	up := emptyUpstream(t)
	client := helperClient(t, "FRAY_TEST_EXIT", "7")
	for _, tc := range []struct {
		name     string
		client   []string
		wantExit int
		wantMsg  string
	}{
		{"exits 7", client, 7, "exit status 7"},
		{"cannot start", []string{filepath.Join(t.TempDir(), "no-such-client")}, -1, "could not run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			junit := filepath.Join(t.TempDir(), "j.xml")
			code, _, stderr, r := runReported(t, 30*time.Second, append([]string{"run", "--upstream", up.URL + "/mcp",
				"--junit", junit, "--"}, tc.client...)...)
			want := exitCommand
			if r.ChecksFailed() {
				want = exitFindings
			}
			if code != want || r.Verdict != report.VerdictFail {
				t.Errorf("exit %d, want %d (verdict %q); stderr:\n%s", code, want, r.Verdict, stderr)
			}
			if !strings.Contains(stderr, tc.wantMsg) {
				t.Errorf("stderr does not say %q:\n%s", tc.wantMsg, stderr)
			}
			if r.Command == nil || r.Command.ExitCode != tc.wantExit {
				t.Errorf("report command %+v, want exit code %d", r.Command, tc.wantExit)
			}
			// The failed client is a failed test case: a CI test tab is not
			// green over it.
			b := readFile(t, junit)
			var doc struct {
				Failures int `xml:"failures,attr"`
				Cases    []struct {
					Name    string    `xml:"name,attr"`
					Failure *struct{} `xml:"failure"`
				} `xml:"testsuite>testcase"`
			}
			if err := xml.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			failedCommand := false
			for _, c := range doc.Cases {
				failedCommand = failedCommand || c.Name == "command" && c.Failure != nil
			}
			if doc.Failures == 0 || !failedCommand {
				t.Errorf("JUnit failures=%d, command case failed %v:\n%s", doc.Failures, failedCommand, b)
			}
		})
	}
}

// TestRunWithoutEvidenceIsInconclusive: a client that sends nothing
// through fray (fray run -- true), and a run whose every answer is fray's
// 502 because the upstream went away, are inconclusive, with their own
// exit code, unless --allow-inconclusive accepts them.
func TestRunWithoutEvidenceIsInconclusive(t *testing.T) {
	up := emptyUpstream(t)
	code, stdout, stderr, r := runReported(t, 30*time.Second, "run", "--upstream", up.URL+"/mcp", "--", "true")
	if code != exitInconclusive || r.Verdict != report.VerdictInconclusive || !strings.Contains(r.Why, "no exchange went through fray") ||
		!strings.Contains(stdout, "fray: verdict INCONCLUSIVE") {
		t.Errorf("exit %d, verdict %s (%s); stdout:\n%s\nstderr:\n%s", code, r.Verdict, r.Why, stdout, stderr)
	}
	code, _, stderr = runFray(t, 30*time.Second, "run", "--upstream", up.URL+"/mcp", "--allow-inconclusive", "--quiet", "--", "true")
	if code != exitOK {
		t.Errorf("--allow-inconclusive: exit %d; stderr:\n%s", code, stderr)
	}

	// An upstream that is gone once the client runs: every answer fray's 502.
	client := helperClient(t, "FRAY_TEST_EXIT", "0")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	// fray run waits for the upstream to accept connections: it does, and
	// is gone before the client's request.
	go func() {
		c, err := ln.Accept()
		if err == nil {
			c.Close()
		}
		ln.Close()
	}()
	code, _, stderr, r = runReported(t, 30*time.Second, append([]string{"run", "--upstream", "http://" + addr + "/mcp", "--"}, client...)...)
	if code != exitInconclusive || !strings.Contains(r.Why, "no exchange reached the upstream") {
		t.Errorf("upstream gone: exit %d, verdict %s (%s); stderr:\n%s", code, r.Verdict, r.Why, stderr)
	}
}

// TestRunUpstreamNotReady: fray run gives up on an upstream that never
// accepts connections, naming it; after a second without it, says what
// it waits for and for how long; and says when the server died first.
func TestRunUpstreamNotReady(t *testing.T) {
	port := freePort(t)
	url := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	code, _, stderr := runFray(t, 30*time.Second, "run", "--upstream", url, "--wait", "200ms", "--quiet", "--", "true")
	if code != exitNoStart || !strings.Contains(stderr, url) || !strings.Contains(stderr, "within 200ms") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit %d naming %s and the wait", code, stderr, exitNoStart, url)
	}
	code, _, stderr = runFray(t, 30*time.Second, "run", "--upstream", url, "--wait", "1500ms", "--quiet", "--", "true")
	if want := "fray: waiting for the upstream at " + url + " (--wait 1.5s)\n"; code != exitNoStart || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr:\n%s\nwant %d and %q", code, stderr, exitNoStart, want)
	}
	code, _, stderr = runFray(t, 30*time.Second, "run", "--upstream", url, "--server", "echo broken; exit 4", "--quiet", "--", "true")
	if code != exitNoStart || !strings.Contains(stderr, "exited (exit status 4) before the upstream "+url) || !strings.Contains(stderr, "server: broken") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit %d saying the server exited, and its output", code, stderr, exitNoStart)
	}
}

// TestRunNodePair runs the TypeScript SDK's example server and client
// under fray run with the polling-server profile: the client's call
// survives fray cutting its stream, and the exit code is the verdict's.
func TestRunNodePair(t *testing.T) {
	node, dir := nodePeers(t, "sdk", "fray run was not tried on the TypeScript SDK pair")
	port := freePort(t)
	code, stdout, stderr, r := runReported(t, 60*time.Second, "run",
		"--upstream", fmt.Sprintf("http://127.0.0.1:%d/mcp", port),
		"--server", fmt.Sprintf("PORT=%d exec %s %s", port, node, filepath.Join(dir, "streamable-server.mjs")),
		"--profile", "polling-server", "--junit", filepath.Join(t.TempDir(), "j.xml"),
		"--", node, filepath.Join(dir, "fray-run-client.mjs"), "--count", "4", "--close-after", "2")
	if code != verdictCode(r) {
		t.Fatalf("exit %d with verdict %q\nstdout:\n%s\nstderr:\n%s", code, r.Verdict, stdout, stderr)
	}
	if !strings.Contains(stdout, `"ok":true`) || !strings.Contains(stdout, `"result":"counted to 4"`) {
		t.Errorf("the client did not finish its call through fray:\n%s\nstderr:\n%s", stdout, stderr)
	}
	if !strings.Contains(stdout, "fray: verdict ") || !strings.Contains(stderr, "server: LISTENING") {
		t.Errorf("want the summary on stdout and the server's output on stderr\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	if r.Profile != "polling-server" || r.Command == nil || r.Command.ExitCode != 0 {
		t.Errorf("report %+v, command %+v", r, r.Command)
	}
	if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
		c.Close()
		t.Error("the server still accepts connections after fray run")
	}
}
