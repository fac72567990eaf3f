package interop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
	"github.com/frayproxy/fray/proxy/trace"
	"github.com/frayproxy/fray/proxy/verify"
)

// runClientFor runs a client against endpoint, giving up after timeout.
type runClientFor func(ctx context.Context, t *testing.T, endpoint string, timeout time.Duration) clientRun

// frayOutcome is one client run through fray with the verifier attached.
type frayOutcome struct {
	Profile string        `json:"profile"`
	Client  clientRun     `json:"client"`
	Report  report.Report `json:"report"`
	// Drained is whether every exchange had ended when observation
	// stopped; when not, the verdict judged only what was past its
	// deadline, as `fray proxy` does.
	Drained bool `json:"drained"`
	// Trace is where the run's trace was written.
	Trace string `json:"trace"`
	Err   string `json:"err,omitempty"`
}

// drainWait bounds how long, once the client is done, the run waits for the
// exchanges at fray to end: a client process that exited has closed its
// connections, so fray sees them go at once; an in-process client closes
// its idle ones on return.
const drainWait = 3 * time.Second

// frayRunThirdParty runs client through a fresh fray in front of up, with
// the built-in profile name ("" for none; its own seed unless seedOverride
// is set), the verifier and a trace writer
// attached, and settles the verdict as `fray proxy` does when it stops:
// observation ends first (fray's own teardown is not the peers' doing),
// then everything still owed is judged if every exchange had ended, or
// only what is past its deadline if some had not. The trace goes to dir.
// It does not call t.Fatal, so it may run on any goroutine.
func frayRunThirdParty(ctx context.Context, t *testing.T, up upstream, name string, seedOverride *uint64, client runClientFor, timeout time.Duration, tracePath string) frayOutcome {
	out := frayOutcome{Profile: name, Trace: tracePath}
	fail := func(err error) frayOutcome {
		out.Err = err.Error()
		return out
	}
	u, err := url.Parse(up.origin)
	if err != nil {
		return fail(err)
	}
	var (
		active   *profiles.Active
		sev      = map[string]string{}
		header   trace.Header
		profName string
	)
	if name != "" {
		prof, err := profiles.Builtin(name)
		if err != nil {
			return fail(err)
		}
		if active, err = profiles.NewActive(prof, seedOverride); err != nil {
			return fail(err)
		}
		for id, s := range prof.Checks {
			sev[id] = string(s)
		}
		profName = prof.Name
		header = trace.Header{Profile: prof.Name, Seed: active.Seed(), ProfileText: builtinText(name)}
	}
	var seed uint64
	if active != nil {
		seed = active.Seed()
	}
	v := verify.New(verify.Options{Severity: sev, Profile: profName, Seed: seed, AnswerDeadline: thirdPartyAnswerDeadline})
	tw, err := trace.Create(tracePath, trace.WriterOptions{Header: header})
	if err != nil {
		return fail(err)
	}
	g := &obsGate{next: observe.Tee(v, tw)}
	opts := proxy.Options{Upstream: u, Observer: g}
	if active != nil {
		opts.Faults = active
	}
	start := time.Now()
	p, err := proxy.New(opts)
	if err != nil {
		return fail(err)
	}
	fl := newFlights()
	srv := httptest.NewServer(fl.wrap(p))
	out.Client = client(ctx, t, srv.URL+up.path, timeout)

	out.Drained = fl.wait(drainWait)
	g.close()
	at := time.Since(start)
	srv.CloseClientConnections()
	srv.Close()
	if out.Drained {
		out.Report = v.Final(at)
	} else {
		out.Report = v.Report(at)
	}
	if err := tw.Finish(trace.End{At: at, Drained: out.Drained}); err != nil {
		return fail(err)
	}
	return out
}

// builtinText is a built-in profile's TOML, for the trace header, so that
// `fray check` and `fray replay` can use the trace alone.
func builtinText(name string) string {
	b, err := os.ReadFile(filepath.Join("..", "..", "profiles", "builtin", name+".toml"))
	if err != nil {
		return ""
	}
	return string(b)
}

// obsGate passes observations on until closed, like fray's own engine, so
// that what fray does while the test tears it down is not judged. It is
// safe for concurrent use.
type obsGate struct {
	next   observe.Observer
	mu     sync.RWMutex
	closed bool
}

func (g *obsGate) Observe(o *observe.Observation) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if !g.closed && g.next != nil {
		g.next.Observe(o)
	}
}

func (g *obsGate) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

// flights counts the exchanges being served and signals when none is left.
// It is safe for concurrent use.
type flights struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed while n == 0; replaced when n leaves 0
}

func newFlights() *flights {
	f := &flights{idle: make(chan struct{})}
	close(f.idle)
	return f
}

func (f *flights) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		if f.n == 0 {
			f.idle = make(chan struct{})
		}
		f.n++
		f.mu.Unlock()
		defer func() {
			f.mu.Lock()
			f.n--
			if f.n == 0 {
				close(f.idle)
			}
			f.mu.Unlock()
		}()
		h.ServeHTTP(w, r)
	})
}

// wait reports whether no exchange was in flight within d.
func (f *flights) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		f.mu.Lock()
		idle, n := f.idle, f.n
		f.mu.Unlock()
		if n == 0 {
			return true
		}
		select {
		case <-idle:
		case <-t.C:
			return false
		}
	}
}

// excuses lists "check: reason xN" for every excuse in rep.
func excuses(rep report.Report) []string {
	var out []string
	for _, c := range rep.Checks {
		for _, e := range c.Excused {
			out = append(out, fmt.Sprintf("%s: %s x%d", c.ID, e.Reason, e.Count))
		}
	}
	return out
}

// keepOutcome writes o as JSON beside its trace when FRAY_THIRDPARTY_TRACES
// names a directory, for reading the evidence after the test.
func keepOutcome(dir, name string, o frayOutcome) error {
	if dir == "" {
		return nil
	}
	b, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name+".json"), b, 0o644)
}

// fileName turns a pair and profile into a file name.
func fileName(pair, profile string) string {
	if profile == "" {
		profile = "none"
	}
	return strings.NewReplacer("/", "_", " ", "_").Replace(pair + "__" + profile)
}
