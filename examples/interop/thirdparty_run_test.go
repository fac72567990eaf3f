package interop_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy"
	"github.com/frayproxy/fray/proxy/jsonrpc"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
	"github.com/frayproxy/fray/proxy/sse"
	"github.com/frayproxy/fray/proxy/trace"
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

// frayRunThirdParty runs client through a fresh fray engine in front of
// up, with the built-in profile name ("" for none; its own seed unless
// seedOverride is set) and a trace, and judges the run as fray run does:
// once the client is done, its exchanges get drainWait to end, fray stops
// observing, and the client's end is known (an in-process client that
// returned, or a process that exited), so what it still owed is judged at
// once. The client's failure is part of the verdict. The trace goes to
// tracePath. It does not call t.Fatal, so it may run on any goroutine.
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
	opts := proxy.Options{Upstream: u, Seed: seedOverride, AnswerDeadline: thirdPartyAnswerDeadline}
	header := trace.Header{Started: time.Now()}
	if name != "" {
		prof, err := profiles.Builtin(name)
		if err != nil {
			return fail(err)
		}
		opts.Profile = prof
		header.Profile, header.Seed, header.ProfileText = prof.Name, prof.Seed, string(prof.Text)
		if seedOverride != nil {
			header.Seed = *seedOverride
		}
	}
	tw, err := trace.Create(tracePath, trace.WriterOptions{Header: header})
	if err != nil {
		return fail(err)
	}
	opts.Trace = tw
	eng, err := proxy.New(opts)
	if err != nil {
		_ = tw.Finish(trace.End{})
		return fail(err)
	}
	srv := httptest.NewServer(eng.Handler())
	out.Client = client(ctx, t, srv.URL+up.path, timeout)
	wctx, cancel := context.WithTimeout(ctx, drainWait)
	eng.Wait(wctx, false)
	cancel()
	st := eng.Stop()
	out.Drained = st.Drained
	srv.CloseClientConnections()
	srv.Close()
	cmd := &report.Command{Args: []string{"client"}}
	if !out.Client.OK {
		cmd.ExitCode, cmd.Error = 1, out.Client.Error
	}
	if out.Report, err = eng.Finish(st, cmd); err != nil {
		return fail(err)
	}
	return out
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
	return strings.NewReplacer("/", "_", " ", "_").Replace(pair + "__" + cmp.Or(profile, "none"))
}

// checkDeliveredProgress holds the client of a fray run to exactly the
// progress notifications that fray's trace shows it delivered, in order
// and as many times as each was delivered, and, with no profile, to every
// one the server sent: fray, transparent, drops none. It judges what the
// server sent from what fray saw of it, where a count would blame fray
// for notifications the server never sent.
func checkDeliveredProgress(t *testing.T, o frayOutcome) {
	t.Helper()
	name := cmp.Or(o.Profile, "none")
	tr, err := trace.ReadFile(o.Trace, trace.ReadOptions{})
	if err != nil {
		t.Errorf("%s: read the trace: %v", name, err)
		return
	}
	var sent int
	var delivered []float64
	for _, ob := range tr.Observations {
		e := ob.Event
		if ob.Kind != observe.KindEvent || e == nil {
			continue
		}
		p, ok := progressOf(e.Data)
		if !ok {
			continue
		}
		sent++
		if e.Fate != observe.Delivered {
			if o.Profile == "" {
				t.Errorf("none: fray did not deliver progress %v (fate %s) with no fault", p, e.Fate)
			}
			continue
		}
		if e.Delivered != nil {
			// The block went out changed (a retry set, an id
			// rewritten): the client got the data it carried then.
			if p, ok = progressOf(sseData(e.Delivered)); !ok {
				t.Errorf("%s: delivered event %d carries no progress, its upstream block did", name, e.Index)
				continue
			}
		}
		for range max(e.Copies, 1) {
			delivered = append(delivered, p)
		}
	}
	got := o.Client.ProgressValues
	t.Logf("%s: the server sent %d progress notifications, fray delivered %v, the client got %v", name, sent, delivered, got)
	if !slices.Equal(got, delivered) {
		t.Errorf("%s: the client got progress %v, but fray delivered %v", name, got, delivered)
	}
}

// progressOf returns params.progress of a notifications/progress message.
func progressOf(data []byte) (float64, bool) {
	m := jsonrpc.Scan(data)
	if m.Kind != mcp.RPCNotification || !m.MethodIs("notifications/progress") {
		return 0, false
	}
	p, err := strconv.ParseFloat(string(jsonrpc.Lookup(m.Params, "progress")), 64)
	return p, err == nil
}

// sseData returns the data of an SSE event block, as fray's own reader
// parses it.
func sseData(block []byte) []byte {
	e, err := sse.NewReader(bytes.NewReader(block), len(block)+1).Next()
	if err != nil {
		return nil
	}
	return e.Data
}
