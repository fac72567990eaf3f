// Package scale holds what fray's scale benchmark and soak test need to
// measure a proxy at thousands of streams:
//
//	parent (the test): Streams, thousands of SSE clients
//	    |
//	    +-- child process "reverseproxy", "fray" or "floor"  (or none: direct)
//	            |
//	            +-- child process "upstream": an SSE server that holds every
//	                stream idle until told to fire events on all of them
//
// Each proxy runs in a process of its own, so that its resident memory is
// read from the kernel (VmRSS) and belongs to it alone, not to the clients
// or the upstream sharing its heap. A child is the test binary run again
// with FRAY_SCALE_CHILD set: the test's TestMain calls RunChild first.
//
// A child prints "ready DATA CONTROL" on stdout once it serves, where DATA
// is the address it proxies or serves streams on and CONTROL the address
// of its control API (GET /stats, GET /debug/pprof/NAME, and POST /fire on
// the upstream); it exits
// when its stdin closes, so that it never outlives the test.
package scale

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// The child modes.
const (
	ModeUpstream     = "upstream"
	ModeReverseProxy = "reverseproxy"
	ModeFray         = "fray"
	// ModeFloor is the least proxy net/http allows, for reference.
	ModeFloor = "floor"
)

// The environment a child reads its part from.
const (
	envChild       = "FRAY_SCALE_CHILD"        // the mode
	envListen      = "FRAY_SCALE_LISTEN"       // the data address, e.g. 127.0.0.2:0
	envUpstream    = "FRAY_SCALE_UPSTREAM"     // a proxy's upstream URL
	envProfile     = "FRAY_SCALE_PROFILE"      // fray: a built-in profile to run under
	envSpeed       = "FRAY_SCALE_SPEED"        // fray: how much faster its clock runs than real time
	envTrace       = "FRAY_SCALE_TRACE"        // fray: the file to write the trace to, as --trace
	envReportEvery = "FRAY_SCALE_REPORT_EVERY" // fray: "1" to make the verdict every minute
)

// ChildConfig says what a child does. Mode and Listen are required; the
// zero values of the others leave them out.
type ChildConfig struct {
	// Mode is ModeUpstream, ModeReverseProxy, ModeFray or ModeFloor.
	Mode string
	// Listen is the data address, usually a loopback address with port 0.
	Listen string
	// Upstream is the URL a proxy forwards to.
	Upstream string
	// Profile is a built-in profile fray runs under, "" for none.
	Profile string
	// Speed makes fray's clock run Speed times faster than real time, so
	// that a profile's schedule of hours passes in minutes; 0 means 1.
	Speed float64
	// Trace is the file fray writes its trace to, as `fray proxy --trace
	// FILE` does; "" writes none.
	Trace string
	// ReportEvery makes fray's verdict every minute of its clock, as
	// `fray proxy --report FILE --report-every 1m` does.
	ReportEvery bool
}

func (c ChildConfig) env() []string {
	env := []string{envChild + "=" + c.Mode, envListen + "=" + c.Listen, envUpstream + "=" + c.Upstream,
		envProfile + "=" + c.Profile, envTrace + "=" + c.Trace, envReportEvery + "="}
	if c.Speed > 0 {
		env = append(env, fmt.Sprintf("%s=%g", envSpeed, c.Speed))
	}
	if c.ReportEvery {
		env[len(env)-1] += "1"
	}
	return env
}

// IsChild reports whether this process was started as a child.
func IsChild() bool { return os.Getenv(envChild) != "" }

// Child is a child process serving one part of the setup. Its methods are
// safe for concurrent use.
type Child struct {
	// Mode is the child's mode.
	Mode string
	// Addr is the data address, Control the control API's address.
	Addr, Control string

	cmd     *exec.Cmd
	stdin   io.WriteCloser
	client  *http.Client
	waitErr chan error
	once    sync.Once
}

// StartChild runs this executable again as a child with cfg and waits
// until it serves (at most a minute). Its stderr goes to this process's.
func StartChild(ctx context.Context, cfg ChildConfig) (*Child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("scale: starting child %s: %w", cfg.Mode, err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), cfg.env()...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("scale: child %s: %w", cfg.Mode, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("scale: child %s: %w", cfg.Mode, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("scale: starting child %s: %w", cfg.Mode, err)
	}
	c := &Child{Mode: cfg.Mode, cmd: cmd, stdin: stdin, waitErr: make(chan error, 1),
		client: &http.Client{Timeout: 2 * time.Minute}}
	ready := make(chan error, 1)
	go func() {
		br := bufio.NewReader(stdout)
		line, err := br.ReadString('\n')
		if err == nil {
			_, err = fmt.Sscanf(line, "ready %s %s", &c.Addr, &c.Control)
		}
		ready <- err
		_, _ = io.Copy(io.Discard, br)
		c.waitErr <- cmd.Wait()
	}()
	timer := time.NewTimer(time.Minute)
	defer timer.Stop()
	select {
	case err = <-ready:
	case <-timer.C:
		err = errors.New("not ready within a minute")
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("scale: child %s: %w", cfg.Mode, err)
	}
	return c, nil
}

// Pid is the child's process id.
func (c *Child) Pid() int { return c.cmd.Process.Pid }

// Stats asks the child for its memory and goroutines; with gc it first
// collects garbage and returns freed memory to the system, so that the
// figures are what the child holds rather than what it has not yet freed.
func (c *Child) Stats(ctx context.Context, gc bool) (Stats, error) {
	var s Stats
	url := "http://" + c.Control + "/stats"
	if gc {
		url += "?gc=1"
	}
	err := c.call(ctx, http.MethodGet, url, &s)
	return s, err
}

// Fire tells an upstream child to write k events on every stream it holds.
func (c *Child) Fire(ctx context.Context, k int) error {
	return c.call(ctx, http.MethodPost, fmt.Sprintf("http://%s/fire?k=%d", c.Control, k), nil)
}

// Profile writes the child's pprof profile name (heap, goroutine, ...)
// to w; for the heap it collects garbage first.
func (c *Child) Profile(ctx context.Context, name string, w io.Writer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+c.Control+"/debug/pprof/"+name+"?gc=1", nil)
	if err != nil {
		return err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return fmt.Errorf("scale: child %s: profile %s: %w", c.Mode, name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("scale: child %s: profile %s: %s", c.Mode, name, resp.Status)
	}
	_, err = io.Copy(w, resp.Body)
	return err
}

// Streams asks an upstream child how many streams it holds.
func (c *Child) Streams(ctx context.Context) (int, error) {
	var n int
	err := c.call(ctx, http.MethodGet, "http://"+c.Control+"/streams", &n)
	return n, err
}

func (c *Child) call(ctx context.Context, method, url string, into any) error {
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return fmt.Errorf("scale: child %s: %w", c.Mode, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("scale: child %s: %s %s: %w", c.Mode, method, url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("scale: child %s: %s %s: %s: %s", c.Mode, method, url, resp.Status, strings.TrimSpace(string(body)))
	}
	if into != nil {
		if err := json.Unmarshal(body, into); err != nil {
			return fmt.Errorf("scale: child %s: %s %s: %w in %q", c.Mode, method, url, err, body)
		}
	}
	return nil
}

// Close ends the child: its stdin closes, it stops serving and exits; one
// that has not exited within 10 s is killed. Close may be called more than
// once.
func (c *Child) Close() error {
	var err error
	c.once.Do(func() {
		c.client.CloseIdleConnections()
		_ = c.stdin.Close()
		timer := time.NewTimer(10 * time.Second)
		defer timer.Stop()
		select {
		case err = <-c.waitErr:
		case <-timer.C:
			_ = c.cmd.Process.Kill()
			err = fmt.Errorf("scale: child %s did not exit; killed: %v", c.Mode, <-c.waitErr)
		}
	})
	return err
}
