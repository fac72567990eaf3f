package interop_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const nodeMissing = "SKIPPED: node/npm not found on PATH; the TypeScript SDK and conformance interop tests did not run"

// nodeEnv is the Node.js toolchain and the installed examples/node package.
type nodeEnv struct {
	node string // path of the node binary
	dir  string // absolute path of examples/node
}

var (
	nodeOnce sync.Once
	nodeErr  error
	nodeSkip bool
	node     nodeEnv
)

// requireNode returns the Node environment, skipping the test loudly if node
// or npm is missing and running npm ci once if the dependencies are not
// installed yet.
func requireNode(t *testing.T) nodeEnv {
	t.Helper()
	nodeOnce.Do(func() { nodeSkip, nodeErr = setupNode() })
	if nodeSkip {
		t.Skip(nodeMissing)
	}
	if nodeErr != nil {
		t.Fatalf("node setup: %v", nodeErr)
	}
	return node
}

func setupNode() (skip bool, err error) {
	nodeBin, err1 := exec.LookPath("node")
	npmBin, err2 := exec.LookPath("npm")
	if err1 != nil || err2 != nil {
		return true, nil
	}
	dir, err := filepath.Abs(filepath.Join("..", "node"))
	if err != nil {
		return false, fmt.Errorf("locate examples/node: %w", err)
	}
	node = nodeEnv{node: nodeBin, dir: dir}
	if installed(dir) {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npmBin, "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return false, fmt.Errorf("npm ci in %s: %w\n%s", dir, err, out)
	}
	return false, nil
}

// nodePackages are packages of examples/node/package.json whose presence
// says that node_modules holds the current install: one from before a
// package was added lacks it, and gets npm ci again.
var nodePackages = []string{
	"@modelcontextprotocol/conformance", "@modelcontextprotocol/server", "@modelcontextprotocol/client", "@modelcontextprotocol/node",
	"@modelcontextprotocol/server-everything", "fastmcp", "tmcp",
	"@tmcp/transport-http", "supergateway", "mcp-proxy", "mcp-remote", "@modelcontextprotocol/inspector-cli",
}

func installed(dir string) bool {
	for _, p := range nodePackages {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", p, "package.json")); err != nil {
			return false
		}
	}
	return true
}

// nodeServer is a Node example server running as a subprocess.
type nodeServer struct {
	URL    string        // the URL from its LISTENING line
	stderr *syncBuffer   // its stderr, for failure reports
	events *stringSet    // ids from "EVENT <id> <stream>" lines (--trace-events)
	exited chan struct{} // closed when the process has been waited for
	err    error         // Wait's result, valid after exited is closed
}

// startNodeServer runs script in examples/node with args and waits for its
// LISTENING line. The process gets SIGTERM, and is killed if it lingers, in
// t.Cleanup or when ctx ends.
func startNodeServer(ctx context.Context, t *testing.T, env nodeEnv, script string, args ...string) *nodeServer {
	t.Helper()
	s := &nodeServer{stderr: &syncBuffer{}, events: newStringSet(), exited: make(chan struct{})}
	ready := make(chan string, 1)
	cmd := exec.CommandContext(ctx, env.node, append([]string{script}, args...)...)
	cmd.Dir = env.dir
	cmd.Env = append(os.Environ(), "NODE_NO_WARNINGS=1")
	cmd.Stderr = s.stderr
	cmd.Stdout = &lineWriter{line: func(line string) {
		switch f := strings.Fields(line); {
		case len(f) == 2 && f[0] == "LISTENING":
			select {
			case ready <- f[1]:
			default:
			}
		case len(f) == 3 && f[0] == "EVENT":
			s.events.add(f[1])
		}
	}}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", script, err)
	}
	go func() {
		s.err = cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
			t.Errorf("signal %s: %v", script, err)
		}
		<-s.exited // bounded by WaitDelay once ctx ends
		if s.err != nil && ctx.Err() == nil {
			t.Errorf("%s exited with %v; stderr:\n%s", script, s.err, s.stderr)
		}
	})
	select {
	case s.URL = <-ready:
		return s
	case <-s.exited:
		t.Fatalf("%s exited before listening (%v); stderr:\n%s", script, s.err, s.stderr)
	case <-ctx.Done():
		t.Fatalf("%s did not print LISTENING: %v; stderr:\n%s", script, ctx.Err(), s.stderr)
	}
	return nil
}

// runNode runs script in examples/node to completion and returns its stdout
// and stderr; err is non-nil if it exited non-zero or ctx ended.
func runNode(ctx context.Context, env nodeEnv, script string, args ...string) (stdout, stderr string, err error) {
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, env.node, append([]string{script}, args...)...)
	cmd.Dir = env.dir
	cmd.Env = append(os.Environ(), "NODE_NO_WARNINGS=1")
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	if err != nil {
		err = fmt.Errorf("%s %s: %w", script, strings.Join(args, " "), err)
	}
	return out.String(), errb.String(), err
}

// lastJSONLine returns the last line of out that looks like a JSON object.
func lastJSONLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); strings.HasPrefix(l, "{") {
			return l
		}
	}
	return ""
}

// lineWriter calls line for every complete line written to it.
type lineWriter struct {
	buf  []byte
	line func(string)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.line(strings.TrimRight(string(w.buf[:i]), "\r"))
		w.buf = w.buf[i+1:]
	}
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

// stringSet is a set of strings safe for concurrent use.
type stringSet struct {
	mu sync.Mutex
	m  map[string]bool
}

func newStringSet() *stringSet { return &stringSet{m: map[string]bool{}} }

func (s *stringSet) add(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[v] = true
}

func (s *stringSet) has(v string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[v]
}
