package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/report"
)

// sseUpstream answers every POST with a short SSE stream: a priming event
// and a JSON-RPC response.
func sseUpstream(t *testing.T) *httptest.Server {
	return serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: 1\ndata: \n\nid: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
	}))
}

// frayRun is fray running in-process, started by a test, with its stderr
// on a pipe the test reads line by line.
type frayRun struct {
	t      *testing.T
	stderr *bufio.Reader
	stdout syncBuffer
	rest   syncBuffer // stderr after tail
	cancel context.CancelFunc
	done   chan int
	copied chan struct{}
	code   int
	ended  bool
}

// launch runs fray with args (after "fray") until stop, Ctrl-C as ctx or
// the end of the test ends it.
func launch(t *testing.T, ctx context.Context, args ...string) *frayRun {
	t.Helper()
	rctx, cancel := context.WithCancel(ctx)
	pr, pw := io.Pipe()
	f := &frayRun{t: t, stderr: bufio.NewReader(pr), cancel: cancel, done: make(chan int, 1)}
	go func() {
		f.done <- run(rctx, append([]string{"fray"}, args...), &f.stdout, pw)
		pw.Close()
	}()
	t.Cleanup(func() { f.stop() })
	return f
}

// line returns fray's next line on stderr.
func (f *frayRun) line() string {
	f.t.Helper()
	line, err := f.stderr.ReadString('\n')
	if err != nil {
		f.cancel()
		f.t.Fatalf("fray's stderr ended: %v (%q)", err, line)
	}
	return line
}

// tail keeps the rest of stderr in f.rest, so that fray never waits on it.
func (f *frayRun) tail() {
	if f.copied != nil {
		return
	}
	f.copied = make(chan struct{})
	go func() {
		_, _ = io.Copy(&f.rest, f.stderr)
		close(f.copied)
	}()
}

// stop ends fray as Ctrl-C does and returns its exit code; then f.stdout
// and f.rest hold all it wrote.
func (f *frayRun) stop() int {
	f.t.Helper()
	if f.ended {
		return f.code
	}
	f.ended = true
	f.cancel()
	f.tail()
	select {
	case f.code = <-f.done:
		<-f.copied
	case <-time.After(20 * time.Second):
		f.t.Error("fray did not stop")
		f.code = -1
	}
	return f.code
}

// startFray launches fray proxy or fray replay and returns its base URL,
// read from the start line, and a function that stops it and returns the
// exit code, stdout and stderr.
func startFray(t *testing.T, ctx context.Context, args ...string) (base string, stop func() (int, string, string)) {
	t.Helper()
	f := launch(t, ctx, args...)
	line := f.line()
	f.tail()
	// fray: proxying http://127.0.0.1:PORT -> UPSTREAM ...
	// fray: replaying TRACE (N observations, faults F) on http://127.0.0.1:PORT
	fields := strings.Fields(line)
	if len(fields) < 5 || fields[1] != "proxying" && fields[1] != "replaying" {
		t.Fatalf("start line %q", line)
	}
	base = fields[slices.IndexFunc(fields, func(f string) bool { return strings.HasPrefix(f, "http://") })]
	return base, func() (int, string, string) {
		code := f.stop()
		return code, f.stdout.String(), line + f.rest.String()
	}
}

// get GETs url and returns the status and the body.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func postThrough(t *testing.T, ctx context.Context, base string) string {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/mcp",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestProxyReportOnShutdown stops fray proxy as SIGINT does (its context
// ends) and checks that the report and JUnit files are whole, the summary
// is printed, and the exit code is the verdict's.
func TestProxyReportOnShutdown(t *testing.T) {
	ctx := within(t, 20*time.Second)
	up := sseUpstream(t)
	dir := t.TempDir()
	rep, junit := filepath.Join(dir, "r.json"), filepath.Join(dir, "j.xml")
	base, stop := startFray(t, ctx, "proxy", "--upstream", up.URL, "--listen", "127.0.0.1:0",
		"--profile", "polling-server", "--report", rep, "--junit", junit, "--quiet")
	if body := postThrough(t, ctx, base); !strings.Contains(body, `"result"`) {
		t.Fatalf("through fray: %q", body)
	}
	code, stdout, stderr := stop()
	r := readReport(t, rep)
	if r.Profile != "polling-server" || r.Seed != 1 || r.Partial || r.DurationMS < 0 || r.Totals.Exchanges == 0 {
		t.Errorf("report header %+v", r)
	}
	if want := verdictCode(r); code != want {
		t.Errorf("exit %d with verdict %q, want %d; stderr:\n%s", code, r.Verdict, verdictCode(r), stderr)
	}
	b := readFile(t, junit)
	var doc struct {
		Suites []struct {
			Name  string `xml:"name,attr"`
			Tests int    `xml:"tests,attr"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil || len(doc.Suites) != 1 || doc.Suites[0].Name != "fray" || doc.Suites[0].Tests != len(r.Checks)+1 {
		t.Errorf("JUnit %+v, %v; want one fray suite with %d tests (the checks and the run's evidence)", doc, err, len(r.Checks)+1)
	}
	if !strings.HasPrefix(stdout, "fray: verdict "+strings.ToUpper(r.Verdict)) {
		t.Errorf("summary on stdout:\n%s", stdout)
	}
	if strings.Contains(stderr, "still open at shutdown") {
		t.Errorf("nothing was in flight, yet:\n%s", stderr)
	}
}

// TestProxyReportEvery checks soak mode: the report file appears while
// fray runs, marked partial, and is replaced by the final one at the end.
func TestProxyReportEvery(t *testing.T) {
	ctx := within(t, 20*time.Second)
	up := sseUpstream(t)
	rep := filepath.Join(t.TempDir(), "r.json")
	base, stop := startFray(t, ctx, "proxy", "--upstream", up.URL, "--listen", "127.0.0.1:0",
		"--report", rep, "--report-every", "20ms", "--quiet")
	postThrough(t, ctx, base)
	// Wait for a snapshot: the file is only ever written whole.
	var snap report.Report
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if f, err := os.Open(rep); err == nil {
			snap, err = report.ReadJSON(f)
			f.Close()
			if err != nil {
				t.Fatalf("a snapshot was not whole: %v", err)
			}
			break
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatal("no snapshot was written")
		}
	}
	if !snap.Partial {
		t.Errorf("snapshot not marked partial: %+v", snap)
	}
	code, _, stderr := stop()
	final := readReport(t, rep)
	if final.Partial {
		t.Errorf("the final report is marked partial (a snapshot landed after it?)")
	}
	if (code == exitOK) != (final.Verdict == report.VerdictPass) {
		t.Errorf("exit %d with verdict %q; stderr:\n%s", code, final.Verdict, stderr)
	}
	if entries, _ := os.ReadDir(filepath.Dir(rep)); len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
}

// TestFinishExitCodes feeds hand-built reports to the end of a run.
func TestFinishExitCodes(t *testing.T) {
	failing := report.Report{Schema: 1, Verdict: report.VerdictFail, Checks: []report.Check{
		{ID: "client.retry-honoured", Severity: checks.Error, Status: report.StatusFail, Count: 2,
			Evidence: []report.Evidence{{Message: "reconnected after 3ms, retry was 500ms", AtMS: 10}}},
		{ID: "server.priming-event", Severity: checks.Warning, Status: report.StatusWarn, Count: 1},
	}}
	failing.Conclude("")
	passing := report.Report{Schema: 1, Verdict: report.VerdictPass, Checks: []report.Check{
		{ID: "server.priming-event", Severity: checks.Warning, Status: report.StatusWarn, Count: 1},
	}}
	clientFailed := passing
	clientFailed.Command = &report.Command{Args: []string{"client"}, ExitCode: 2, Error: "exit status 2"}
	clientFailed.Conclude("")
	short := passing
	short.Conclude("no fault fired: nothing the profile selects happened")
	for _, tc := range []struct {
		name     string
		r        report.Report
		allow    bool
		wantCode int
		wantMsg  string
	}{
		{"fail", failing, false, exitFindings, "verdict fail: failed: client.retry-honoured (2)"},
		{"warnings pass", passing, false, exitOK, ""},
		{"only the client failed", clientFailed, false, exitCommand, "the client command failed: exit status 2"},
		{"inconclusive", short, false, exitInconclusive, "verdict inconclusive: no fault fired"},
		{"inconclusive accepted", short, true, exitOK, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var stdout bytes.Buffer
			o := &outputs{paths: map[string]string{"report": filepath.Join(dir, "r.json"), "junit": filepath.Join(dir, "j.xml")},
				stdout: &stdout, summary: &stdout, allow: tc.allow}
			err := o.finish(tc.r)
			if code := exitCode(err); code != tc.wantCode || (tc.wantMsg != "" && !strings.Contains(err.Error(), tc.wantMsg)) {
				t.Errorf("finish: %v (exit %d), want exit %d saying %q", err, code, tc.wantCode, tc.wantMsg)
			}
			for _, p := range o.paths {
				if _, err := os.Stat(p); err != nil {
					t.Errorf("not written: %v", err)
				}
			}
			if !strings.Contains(stdout.String(), "verdict "+strings.ToUpper(tc.r.Verdict)) {
				t.Errorf("summary:\n%s", stdout.String())
			}
		})
	}
	t.Run("unwritable report", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "no", "r.json")
		o := &outputs{paths: map[string]string{"report": path}, stdout: io.Discard, summary: io.Discard}
		if err := o.finish(passing); exitCode(err) != exitNoStart || !strings.Contains(err.Error(), path) {
			t.Errorf("finish: %v, want exit %d naming %s", err, exitNoStart, path)
		}
	})
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
