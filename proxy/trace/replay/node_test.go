package replay_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// nodeDir is examples/node, where the TypeScript SDK peers live.
func nodeDir(t *testing.T) (node, dir string) {
	t.Helper()
	bin, err1 := exec.LookPath("node")
	npm, err2 := exec.LookPath("npm")
	if err1 != nil || err2 != nil {
		t.Skip("SKIPPED: node/npm not found on PATH; the TypeScript SDK replay test did not run")
	}
	dir, err := filepath.Abs(filepath.Join("..", "..", "..", "examples", "node"))
	if err != nil {
		t.Fatal(err)
	}
	nodeOnce.Do(func() {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			nodeErr = fmt.Errorf("npm ci in %s: %w\n%s", dir, err, out)
		}
	})
	if nodeErr != nil {
		t.Fatal(nodeErr)
	}
	return bin, dir
}

var (
	nodeOnce sync.Once
	nodeErr  error
)

// startNodeServer runs script and returns the URL of its LISTENING line;
// the process is stopped when the test ends.
func startNodeServer(ctx context.Context, t *testing.T, script string, args ...string) string {
	t.Helper()
	bin, dir := nodeDir(t)
	cmd := exec.CommandContext(ctx, bin, append([]string{script}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NODE_NO_WARNINGS=1")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", script, err)
	}
	exited := make(chan struct{})
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == "LISTENING" {
				select {
				case ready <- f[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-exited
	})
	select {
	case u := <-ready:
		return u
	case <-exited:
		t.Fatalf("%s exited before listening; stderr:\n%s", script, stderr.String())
	case <-ctx.Done():
		t.Fatalf("%s did not listen: %v; stderr:\n%s", script, ctx.Err(), stderr.String())
	}
	return ""
}

// attempt is one request the TypeScript client made, as it reports them.
type attempt struct {
	Method      string  `json:"method"`
	LastEventID *string `json:"lastEventId"`
	Status      *int    `json:"status"`
}

// clientRun is the summary line streamable-client.mjs prints.
type clientRun struct {
	OK        bool      `json:"ok"`
	Error     string    `json:"error"`
	Result    string    `json:"result"`
	Progress  int       `json:"progress"`
	Reconnect int       `json:"reconnects"`
	Requests  []attempt `json:"requests"`
	raw       string
}

// runNodeClient runs the TypeScript client against endpoint.
func runNodeClient(ctx context.Context, t *testing.T, endpoint string, args ...string) clientRun {
	t.Helper()
	bin, dir := nodeDir(t)
	cmd := exec.CommandContext(ctx, bin, append([]string{"streamable-client.mjs", endpoint}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NODE_NO_WARNINGS=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var run clientRun
	if jerr := json.Unmarshal([]byte(lines[len(lines)-1]), &run); jerr != nil {
		t.Fatalf("client printed no JSON summary (%v; exit %v)\nstdout:\n%s\nstderr:\n%s", jerr, err, stdout.String(), stderr.String())
	}
	run.raw = lines[len(lines)-1]
	return run
}

// resumes lists the Last-Event-IDs of the client's reconnections, in order.
func (r clientRun) resumes() []string {
	var out []string
	for _, a := range r.Requests {
		if a.Method == "GET" && a.LastEventID != nil {
			out = append(out, *a.LastEventID)
		}
	}
	return out
}

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
