package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// serverProc is the --server command of fray run: a shell command in its
// own process group, so that stopping it stops whatever it started.
type serverProc struct {
	line   string
	cmd    *exec.Cmd
	out    *prefixWriter
	exited chan struct{} // closed once the shell has been waited for
	err    error         // Wait's result, valid after exited is closed
}

// serverStopGrace is how long the server's process group has between
// SIGTERM and SIGKILL.
const serverStopGrace = 5 * time.Second

// startServer runs line with /bin/sh, its output lines prefixed with
// "server: " on w.
func startServer(line string, w io.Writer) (*serverProc, error) {
	s := &serverProc{line: line, out: &prefixWriter{prefix: "server: ", w: w}, exited: make(chan struct{})}
	s.cmd = exec.Command("/bin/sh", "-c", line)
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	// A grandchild that left the group may hold the output pipe open.
	s.cmd.WaitDelay = time.Second
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("--server %q: %w", line, err)
	}
	go func() {
		s.err = s.cmd.Wait()
		s.out.flush()
		close(s.exited)
	}()
	return s, nil
}

// done is closed when the server has exited; nil for no server, so that a
// select on it waits for ever.
func (s *serverProc) done() <-chan struct{} {
	if s == nil {
		return nil
	}
	return s.exited
}

// stop ends the server's process group: SIGTERM, then SIGKILL if it has
// not exited within serverStopGrace. It returns once the shell was waited
// for. Safe to call on nil and more than once.
func (s *serverProc) stop() {
	if s == nil {
		return
	}
	pgid := s.cmd.Process.Pid
	// The group outlives the shell when the shell ran the server in the
	// background; signal it whether or not the shell is still there.
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	t := time.NewTimer(serverStopGrace)
	defer t.Stop()
	select {
	case <-s.exited:
	case <-t.C:
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-s.exited
}

// waitReady returns once u's host accepts TCP connections; it gives up
// after limit, when ctx ends, or when srv exits first, with an error
// naming u.
func waitReady(ctx context.Context, u *url.URL, limit time.Duration, srv *serverProc) error {
	addr := u.Host
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		addr = net.JoinHostPort(u.Hostname(), port)
	}
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	d := net.Dialer{Timeout: time.Second}
	for {
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			conn.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the upstream %s: %w", u, context.Cause(ctx))
		case <-srv.done():
			return fmt.Errorf("the --server command %q exited (%v) before the upstream %s accepted connections", srv.line, srv.err, u)
		case <-deadline.C:
			return fmt.Errorf("the upstream %s did not accept TCP connections within %s (--wait): %w", u, limit, err)
		case <-tick.C:
		}
	}
}

// clientResult is how the client command ended.
type clientResult struct {
	code int   // its exit code; -1 when it could not start or was killed
	err  error // nil when it exited 0
}

// runClient runs args with FRAY_URL set and its output on stdout and
// stderr; ctx ending sends it SIGTERM (SIGKILL 5 s later).
func runClient(ctx context.Context, args []string, frayURL string, stdin io.Reader, stdout, stderr io.Writer) clientResult {
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "FRAY_URL="+frayURL)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil, errors.Is(err, exec.ErrWaitDelay):
		// ErrWaitDelay: it exited 0, but something it started kept its
		// output open; that is not the client failing.
		return clientResult{code: 0}
	case ctx.Err() != nil:
		return clientResult{code: -1, err: errors.New("interrupted: fray was stopped by a signal")}
	case errors.As(err, &exit):
		return clientResult{code: exit.ExitCode(), err: exit}
	default:
		return clientResult{code: -1, err: fmt.Errorf("could not run: %w", err)}
	}
}

// prefixWriter writes whole lines to w, each after prefix. It is safe for
// concurrent use.
type prefixWriter struct {
	prefix string
	w      io.Writer
	mu     sync.Mutex
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 && len(p.buf) < maxPrefixedLine {
			break
		}
		if i < 0 {
			i = len(p.buf)
			p.buf = append(p.buf, '\n')
		}
		if _, err := fmt.Fprintf(p.w, "%s%s\n", p.prefix, p.buf[:i]); err != nil {
			return 0, err
		}
		p.buf = p.buf[i+1:]
	}
	return len(b), nil
}

// maxPrefixedLine bounds what a prefixWriter holds: a longer line is
// broken.
const maxPrefixedLine = 64 << 10

// flush writes an unfinished last line.
func (p *prefixWriter) flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.buf) > 0 {
		fmt.Fprintf(p.w, "%s%s\n", p.prefix, p.buf)
		p.buf = nil
	}
}
