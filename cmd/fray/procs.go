package main

import (
	"bytes"
	"cmp"
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

	"github.com/urfave/cli/v2"
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

// upstreamAddr is the host and port fray dials to see whether u is up.
func upstreamAddr(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	port := "80"
	if u.Scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// portTaken checks, before the --server command runs, that nothing
// accepts connections at u yet: a server left over from an earlier run
// would be tested in place of the one fray was told to start.
func portTaken(ctx context.Context, u *url.URL, line string) error {
	d := net.Dialer{Timeout: time.Second}
	conn, err := d.DialContext(ctx, "tcp", upstreamAddr(u))
	if err != nil {
		return nil
	}
	conn.Close()
	return cli.Exit(fmt.Sprintf("--server %q: %s already accepts connections before the server command runs, "+
		"so fray would test whatever listens there; stop the process that holds %s (ss -ltnp shows it), "+
		"or drop --server to test the server already running", line, upstreamAddr(u), upstreamAddr(u)), exitNoStart)
}

// sayFunc says one of fray's own lines, as sayf does.
type sayFunc func(format string, args ...any)

// waitingAfter is how long fray waits for the upstream in silence before
// it says that it is waiting.
const waitingAfter = time.Second

// waitReady returns once u's host accepts TCP connections; it gives up
// after limit, when ctx ends, or when srv exits first, with an error
// naming u. After waitingAfter it says that it is waiting.
func waitReady(ctx context.Context, u *url.URL, limit time.Duration, srv *serverProc, say sayFunc) error {
	addr := upstreamAddr(u)
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	waiting := time.NewTimer(waitingAfter)
	defer waiting.Stop()
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
			return cli.Exit(fmt.Sprintf("the --server command %q exited (%v) before the upstream %s accepted connections", srv.line, srv.err, u), exitNoStart)
		case <-deadline.C:
			return cli.Exit(fmt.Sprintf("the upstream %s did not accept TCP connections within %s (--wait): %v", u, limit, err), exitNoStart)
		case <-waiting.C:
			say("waiting for the upstream at %s (--wait %s)", u, limit)
		case <-tick.C:
		}
	}
}

// errServerExited ends the client's context when the --server command
// exits while the client runs.
var errServerExited = errors.New("stopped: the --server command exited while the client ran")

// clientContext is what the client command runs under: it ends with ctx,
// after set's bound (none when 0), or when srv exits. release frees it.
func clientContext(ctx context.Context, set runSettings, srv *serverProc) (cctx context.Context, release func()) {
	cctx, cancel := context.WithCancelCause(ctx)
	var t *time.Timer
	if timeout := set.clientTimeout; timeout > 0 {
		t = time.AfterFunc(timeout, func() {
			cancel(fmt.Errorf("stopped: it ran longer than %s %s", cmp.Or(set.timeoutFrom, "--client-timeout"), timeout))
		})
	}
	if srv != nil {
		go func() {
			select {
			case <-srv.done():
				cancel(errServerExited)
			case <-cctx.Done():
			}
		}()
	}
	return cctx, func() {
		if t != nil {
			t.Stop()
		}
		cancel(nil)
	}
}

// exitedEarly reports whether the server exited by itself, before fray
// stopped it; false for no server.
func (s *serverProc) exitedEarly() bool {
	select {
	case <-s.done():
		return true
	default:
		return false
	}
}

// diedError is the error of a run whose server exited while it went on.
func (s *serverProc) diedError() error {
	return cli.Exit(fmt.Sprintf("the --server command %q exited (%v) while the run went on: "+
		"the verdict judges a server that was gone; see its output above (lines after \"server: \")", s.line, s.err), exitNoStart)
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
		cause := context.Cause(ctx)
		if errors.Is(cause, context.Canceled) {
			cause = errors.New("interrupted: fray was stopped by a signal")
		}
		return clientResult{code: -1, err: cause}
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
