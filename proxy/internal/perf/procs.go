package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// proc is a proxy running in a process of its own: fray proxy, the
// ReverseProxy child or toxiproxy.
type proc struct {
	name  string
	addr  string // where clients connect, host:port
	admin string // fray's admin API, host:port, when asked for
	cmd   *exec.Cmd
	done  chan error
}

// pid is the process's id.
func (p *proc) pid() int { return p.cmd.Process.Pid }

// cpu is the CPU time the process has used so far.
func (p *proc) cpu() (time.Duration, error) { return procCPU(p.pid()) }

// stop interrupts the process and waits for it to exit, killing it after
// 10 s.
func (p *proc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	t := time.NewTimer(10 * time.Second)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// start runs cmd, in an environment without GOGC and GOMEMLIMIT, and
// waits, at most a minute, for the first line of out (its stdout or
// stderr) that ready accepts; the rest of out is read and dropped. ready
// returns the address found in the line, which the proc serves on.
func start(ctx context.Context, name string, cmd *exec.Cmd, out io.Reader,
	ready func(string) (string, bool), closeAfter ...io.Closer) (*proc, error) {
	p := &proc{name: name, cmd: cmd, done: make(chan error, 1)}
	cmd.Env = defaultGC(os.Environ())
	err := cmd.Start()
	for _, c := range closeAfter {
		c.Close() // the child's end of out: this process keeps none
	}
	if err != nil {
		return nil, fmt.Errorf("perf: starting %s: %w", name, err)
	}
	found := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		var last []string
		for sc.Scan() {
			if addr, ok := ready(sc.Text()); ok {
				p.addr = addr
				found <- nil
				break
			}
			last = append(last, sc.Text())
		}
		found <- fmt.Errorf("exited before it served: %s", strings.Join(last, " | "))
		_, _ = io.Copy(io.Discard, out)
		if f, ok := out.(*os.File); ok {
			f.Close() // a pipe of this process's own, not cmd's
		}
		p.done <- cmd.Wait()
	}()
	t := time.NewTimer(time.Minute)
	defer t.Stop()
	select {
	case err = <-found:
	case <-t.C:
		err = errors.New("not serving within a minute")
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		p.stop()
		return nil, fmt.Errorf("perf: %s: %w", name, err)
	}
	return p, nil
}

// startFray runs `fray proxy --upstream upstream --listen 127.0.0.1:0`
// with extra flags, and reads the addresses it serves on from what it
// prints on stderr.
func startFray(ctx context.Context, bin, upstream string, extra ...string) (*proc, error) {
	args := append([]string{"proxy", "--upstream", upstream, "--listen", "127.0.0.1:0"}, extra...)
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	// Set before start receives the line that makes it return.
	var admin string
	p, err := start(ctx, "fray proxy", cmd, stderr, func(line string) (string, bool) {
		line = strings.TrimPrefix(line, "fray: ")
		if a, ok := strings.CutPrefix(line, "admin API on http://"); ok {
			admin, _, _ = strings.Cut(a, " ")
		}
		rest, ok := strings.CutPrefix(line, "proxying http://")
		addr, _, _ := strings.Cut(rest, " ")
		return addr, ok
	})
	if err != nil {
		return nil, err
	}
	p.admin = admin
	return p, nil
}

// startReverseProxy runs this program again as the ReverseProxy child.
func startReverseProxy(ctx context.Context, upstream string) (*proc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("perf: %w", err)
	}
	cmd := exec.Command(exe, reverseProxyArg, upstream)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	return start(ctx, "reverseproxy", cmd, stdout, func(line string) (string, bool) {
		return strings.CutPrefix(line, "listening ")
	})
}

// startToxiproxy runs toxiproxy's server (bin) on a free loopback port
// and creates one proxy to upstream (host:port) through its HTTP API,
// with no toxic.
func startToxiproxy(ctx context.Context, bin, upstream string) (*proc, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	api := "127.0.0.1:" + port
	cmd := exec.Command(bin, "-host", "127.0.0.1", "-port", port)
	// Its log, stdout and stderr together, ends when it exits.
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("perf: %w", err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	// Ready once its API answers: the log's wording is its own.
	p, err := start(ctx, "toxiproxy", cmd, pr, func(string) (string, bool) { return "", apiUp(ctx, api) }, pw)
	if err != nil {
		return nil, err
	}
	body := fmt.Sprintf(`{"name":"fray-perf","listen":"127.0.0.1:0","upstream":%q,"enabled":true}`, upstream)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+api+"/proxies", strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		defer resp.Body.Close()
		var created struct{ Listen string }
		b, _ := io.ReadAll(resp.Body)
		if err = json.Unmarshal(b, &created); err == nil && (resp.StatusCode != http.StatusCreated || created.Listen == "") {
			err = fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(b))
		}
		p.addr = created.Listen
	}
	if err != nil {
		p.stop()
		return nil, fmt.Errorf("perf: toxiproxy: creating a proxy to %s: %w", upstream, err)
	}
	return p, nil
}

// apiUp reports whether toxiproxy's API at addr answers, waiting up to a
// second for it.
func apiUp(ctx context.Context, addr string) bool {
	for range 20 {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/version", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		}
		time.Sleep(50 * time.Millisecond) // polling a port another process opens
	}
	return false
}

// freePort is a loopback port free a moment ago, for a program that
// cannot be told to listen on port 0 and say which it got.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("perf: %w", err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port, nil
}

// defaultGC is env without GOGC and GOMEMLIMIT: every proxy collects
// garbage as it does by default.
func defaultGC(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "GOGC=") && !strings.HasPrefix(kv, "GOMEMLIMIT=") {
			out = append(out, kv)
		}
	}
	return out
}
