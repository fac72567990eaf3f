// Package nodepeer runs the Node peers of examples/node from Go tests: it
// finds node and npm, installs the pinned packages once (npm ci), starts a
// server script and waits for the URL it prints, and runs a script to its
// end.
package nodepeer

import (
	"bytes"
	"context"
	"encoding/json"
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

// Env is the node binary and the examples/node folder with its packages
// installed.
type Env struct {
	Node string // path of the node binary
	Dir  string // absolute path of examples/node
}

var (
	once     sync.Once
	env      Env
	missing  bool
	setupErr error
)

// Require returns the Env of the examples/node folder at dir (a path from
// the test's package). It skips t, saying that what did not run, when node
// or npm is not on PATH, and runs npm ci there once per process when a
// package of its package.json is not installed.
func Require(t testing.TB, dir, what string) Env {
	t.Helper()
	once.Do(func() { missing, setupErr = setup(dir) })
	if missing {
		t.Skip("SKIPPED: node/npm not found on PATH; " + what + " did not run")
	}
	if setupErr != nil {
		t.Fatalf("node setup: %v", setupErr)
	}
	return env
}

func setup(dir string) (missing bool, err error) {
	node, err1 := exec.LookPath("node")
	npm, err2 := exec.LookPath("npm")
	if err1 != nil || err2 != nil {
		return true, nil
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return false, fmt.Errorf("locate examples/node: %w", err)
	}
	env = Env{Node: node, Dir: dir}
	if ok, err := installed(dir); err != nil || ok {
		return false, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return false, fmt.Errorf("npm ci in %s: %w\n%s", dir, err, out)
	}
	return false, nil
}

// installed reports whether every dependency of dir's package.json is in
// its node_modules: an install from before a package was added lacks it.
func installed(dir string) (bool, error) {
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return false, err
	}
	var pkg struct{ Dependencies map[string]string }
	if err := json.Unmarshal(b, &pkg); err != nil {
		return false, fmt.Errorf("%s/package.json: %w", dir, err)
	}
	for name := range pkg.Dependencies {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", name, "package.json")); err != nil {
			return false, nil
		}
	}
	return true, nil
}

// command is script run by node in e.Dir, stopped with SIGTERM when ctx
// ends and killed if it lingers.
func (e Env) command(ctx context.Context, script string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, e.Node, append([]string{script}, args...)...)
	cmd.Dir = e.Dir
	cmd.Env = append(os.Environ(), "NODE_NO_WARNINGS=1")
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// Run runs script with args to its end and returns its stdout and stderr;
// err is non-nil when it exited non-zero or ctx ended.
func (e Env) Run(ctx context.Context, script string, args ...string) (stdout, stderr string, err error) {
	var out, errb bytes.Buffer
	cmd := e.command(ctx, script, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err = cmd.Run(); err != nil {
		err = fmt.Errorf("%s %s: %w", script, strings.Join(args, " "), err)
	}
	return out.String(), errb.String(), err
}

// Server is a server script running as a subprocess.
type Server struct {
	URL    string      // the URL of its LISTENING line
	Stderr *SyncBuffer // its stderr, for failure reports

	exited chan struct{} // closed when the process has been waited for
	err    error         // Wait's result, once exited is closed
	mu     sync.Mutex
	events map[string]bool
}

// Sent reports whether the server printed "EVENT <id> <stream>" for id, as
// the scripts do with --trace-events.
func (s *Server) Sent(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.events[id]
}

// Start runs script with args and waits for its LISTENING line. The
// process gets SIGTERM in t.Cleanup or when ctx ends, and is killed if it
// lingers; an exit with an error before ctx ends fails t.
func (e Env) Start(ctx context.Context, t testing.TB, script string, args ...string) *Server {
	t.Helper()
	s := &Server{Stderr: &SyncBuffer{}, exited: make(chan struct{}), events: map[string]bool{}}
	ready := make(chan string, 1)
	cmd := e.command(ctx, script, args...)
	cmd.Stderr = s.Stderr
	cmd.Stdout = &lineWriter{line: func(line string) {
		switch f := strings.Fields(line); {
		case len(f) == 2 && f[0] == "LISTENING":
			select {
			case ready <- f[1]:
			default:
			}
		case len(f) == 3 && f[0] == "EVENT":
			s.mu.Lock()
			s.events[f[1]] = true
			s.mu.Unlock()
		}
	}}
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
			t.Errorf("%s exited with %v; stderr:\n%s", script, s.err, s.Stderr)
		}
	})
	select {
	case s.URL = <-ready:
		return s
	case <-s.exited:
		t.Fatalf("%s exited before listening (%v); stderr:\n%s", script, s.err, s.Stderr)
	case <-ctx.Done():
		t.Fatalf("%s did not print LISTENING: %v; stderr:\n%s", script, ctx.Err(), s.Stderr)
	}
	return nil
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

// SyncBuffer is a bytes.Buffer safe for concurrent use.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p to the buffer.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
