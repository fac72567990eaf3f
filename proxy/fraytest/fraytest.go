// Package fraytest puts fray in front of an MCP server inside a Go test,
// in-process, in the spirit of net/http/httptest: Start takes the server's
// MCP endpoint and a fault profile, and returns the endpoint to point the
// client at. When the test ends, fray judges the run as `fray run` does
// and fails the test with every finding and its evidence unless the
// verdict is a pass.
//
//	func TestClientRecovers(t *testing.T) {
//		srv := httptest.NewServer(myServer)
//		t.Cleanup(srv.Close)
//		f := fraytest.Start(t, srv.URL+"/mcp", fraytest.Profile("polling-server"))
//		runMyClient(t, f.URL) // the client under test, through fray
//	}
//
// The engine is the one every fray command runs (package proxy): the same
// proxy, verifier and checks.
package fraytest

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy"
	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/forward"
	"github.com/frayproxy/fray/proxy/report"
	"github.com/frayproxy/fray/proxy/trace"
)

// Option configures New and Start.
type Option func(*config) error

type config struct {
	opts      proxy.Options
	profile   string
	toml      string
	tracePath string
	settle    time.Duration
	expect    []string
}

// Profile runs fray under a profile: a built-in name (see `fray profiles
// list`) or a TOML file.
func Profile(nameOrFile string) Option {
	return func(c *config) error { c.profile = nameOrFile; return nil }
}

// ProfileTOML runs fray under the profile written in text.
func ProfileTOML(text string) Option {
	return func(c *config) error { c.toml = text; return nil }
}

// Seed seeds the profile's random choices instead of the profile's own
// seed.
func Seed(seed uint64) Option {
	return func(c *config) error { c.opts.Seed = &seed; return nil }
}

// Severity overrides one check's severity, as a profile's [checks] table
// does.
func Severity(check string, sev checks.Severity) Option {
	return func(c *config) error {
		if _, ok := checks.Lookup(check); !ok {
			return fmt.Errorf("fraytest: no check %q", check)
		}
		if _, ok := checks.ParseSeverity(string(sev)); !ok {
			return fmt.Errorf("fraytest: check %s: severity %q is not error, warning or off", check, sev)
		}
		if c.opts.Checks == nil {
			c.opts.Checks = map[string]checks.Severity{}
		}
		c.opts.Checks[check] = sev
		return nil
	}
}

// Trace records the run to the trace file at path, for fray check, fray
// report --html and fray replay.
func Trace(path string) Option {
	return func(c *config) error { c.tracePath = path; return nil }
}

// Settle is how long, once the test is over, fray waits for streams still
// open to end before it judges the run; 0 means 2 s.
func Settle(d time.Duration) Option {
	return func(c *config) error { c.settle = d; return nil }
}

// ExpectFailures makes Start's verdict the expected one when exactly these
// checks fail: a test of a peer known to misbehave. A run where they do
// not fail, or others fail too, fails the test.
func ExpectFailures(ids ...string) Option {
	return func(c *config) error {
		for _, id := range ids {
			if _, ok := checks.Lookup(id); !ok {
				return fmt.Errorf("fraytest: no check %q", id)
			}
		}
		c.expect = append(c.expect, ids...)
		return nil
	}
}

// Fray is fray running in front of an upstream for a test. Its methods
// are safe for concurrent use.
type Fray struct {
	// URL is the upstream's MCP endpoint through fray: the URL to give the
	// client under test.
	URL string

	eng    *proxy.Engine
	srv    *httptest.Server
	settle time.Duration
	expect []string

	once   sync.Once
	final  report.Report
	finErr error
}

// New starts fray in front of upstream, the server's MCP endpoint as a
// client would use it (http or https). Close ends it and returns the
// verdict; Start does both for a test.
func New(upstream string, opts ...Option) (*Fray, error) {
	var c config
	for _, o := range opts {
		if err := o(&c); err != nil {
			return nil, err
		}
	}
	if _, err := forward.ParseUpstream(upstream); err != nil {
		return nil, fmt.Errorf("fraytest: %w", err)
	}
	endpoint, _ := url.Parse(upstream)
	c.opts.Upstream = &url.URL{Scheme: endpoint.Scheme, Host: endpoint.Host}
	c.opts.Mutable = true
	switch {
	case c.profile != "" && c.toml != "":
		return nil, fmt.Errorf("fraytest: give Profile or ProfileTOML, not both")
	case c.profile != "":
		p, err := profiles.Resolve(c.profile)
		if err != nil {
			return nil, fmt.Errorf("fraytest: profile %s: %w", c.profile, err)
		}
		c.opts.Profile = p
	case c.toml != "":
		p, err := profiles.Parse("profile.toml", strings.NewReader(c.toml))
		if err != nil {
			return nil, fmt.Errorf("fraytest: %w", err)
		}
		c.opts.Profile = p
	}
	if c.tracePath != "" {
		h := trace.Header{Started: time.Now(), Profile: "none", Checks: c.opts.Checks}
		if p := c.opts.Profile; p != nil {
			h.Profile, h.Seed, h.ProfileText = p.Name, p.Seed, string(p.Text)
			if c.opts.Seed != nil {
				h.Seed = *c.opts.Seed
			}
		}
		w, err := trace.Create(c.tracePath, trace.WriterOptions{Header: h})
		if err != nil {
			return nil, fmt.Errorf("fraytest: %w", err)
		}
		c.opts.Trace = w
	}
	eng, err := proxy.New(c.opts)
	if err != nil {
		if c.opts.Trace != nil {
			_ = c.opts.Trace.Finish(trace.End{})
		}
		return nil, fmt.Errorf("fraytest: %w", err)
	}
	if c.settle <= 0 {
		c.settle = 2 * time.Second
	}
	f := &Fray{eng: eng, srv: httptest.NewServer(eng.Handler()), settle: c.settle, expect: c.expect}
	u := *endpoint
	fu, _ := url.Parse(f.srv.URL)
	u.Scheme, u.Host = fu.Scheme, fu.Host
	f.URL = u.String()
	return f, nil
}

// Start is New for a test: it fails t at once when fray cannot start, and
// when the test ends (t.Cleanup) it closes fray and fails t with the
// verdict's findings and their evidence unless the verdict is a pass (or,
// with ExpectFailures, exactly the expected checks failed).
func Start(t testing.TB, upstream string, opts ...Option) *Fray {
	t.Helper()
	f, err := New(upstream, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r, err := f.Close()
		if err != nil {
			t.Errorf("fray: %v", err)
		}
		if msg := f.judge(r); msg != "" {
			t.Error(msg)
		}
	})
	return f
}

// Swap puts another profile in force while the test runs: a built-in
// name, a file, or TOML text. The change is recorded: the report lists it
// and names the profile in force at the end.
func (f *Fray) Swap(profile string) error {
	var p *profiles.Profile
	var err error
	if strings.ContainsAny(profile, "=\n") {
		p, err = profiles.Parse("profile.toml", strings.NewReader(profile))
	} else {
		p, err = profiles.Resolve(profile)
	}
	if err != nil {
		return fmt.Errorf("fraytest: swap: %w", err)
	}
	return f.eng.Swap(p)
}

// Close stops fray: it waits up to the settle time for streams still open
// to end, stops observing, and returns the final verdict. It may be called
// more than once; later calls return the same report.
func (f *Fray) Close() (report.Report, error) {
	f.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), f.settle)
		f.eng.Wait(ctx, true)
		cancel()
		st := f.eng.Stop()
		f.srv.Close()
		f.final, f.finErr = f.eng.Finish(st, nil)
	})
	return f.final, f.finErr
}

// judge says why r fails the test, "" when it does not.
func (f *Fray) judge(r report.Report) string {
	var failed []string
	for _, c := range r.Checks {
		if c.Status == report.StatusFail {
			failed = append(failed, c.ID)
		}
	}
	if len(f.expect) > 0 {
		if strings.Join(sorted(failed), ",") == strings.Join(sorted(f.expect), ",") {
			return ""
		}
		return fmt.Sprintf("fray: expected exactly %q to fail, got %q\n%s", f.expect, failed, Describe(r))
	}
	if r.Verdict == report.VerdictPass {
		return ""
	}
	return Describe(r)
}

// Describe renders a verdict for a test's output: the verdict line, then
// each check that failed or warned with every piece of its evidence.
func Describe(r report.Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "fray: verdict %s (profile %s, seed %d): %d exchanges, %d events, %d faults",
		strings.ToUpper(r.Verdict), orNone(r.Profile), r.Seed, r.Totals.Exchanges, r.Totals.Events, r.Totals.Faults)
	for _, c := range r.Checks {
		if c.Status != report.StatusFail && c.Status != report.StatusWarn {
			continue
		}
		fmt.Fprintf(&b, "\n  %s %s (%d): %s", strings.ToUpper(c.Status), c.ID, c.Count, c.Summary)
		for _, e := range c.Evidence {
			fmt.Fprintf(&b, "\n    %s", report.FormatEvidence(e))
		}
	}
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	slices.Sort(out)
	return out
}
