package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/frayproxy/fray/examples/gosdk/refpeer"
	"github.com/frayproxy/fray/proxy"
	"github.com/frayproxy/fray/proxy/report"
)

// demoProfile is the demo's default: every tools/call stream cut after
// its priming event, which a correct pair survives by resuming.
const demoProfile = "polling-server"

// demoClients is how many clients the demo runs at once; with two, the
// seed gives one a retry and leaves the other to its own backoff.
const demoClients = 2

// The tool call: demoCount steps demoDelay apart, the server closing the
// stream itself after step demoCloseAfter (SEP-1699), late enough that a
// client resumed from fray's cut is there to see it.
const (
	demoCount      = 8
	demoCloseAfter = 6
	demoDelay      = 150 * time.Millisecond
)

// demoTimeout bounds the whole demo.
const demoTimeout = 25 * time.Second

func demoCommand() *cli.Command {
	return &cli.Command{
		Name:  "demo",
		Usage: "watch fray break a real MCP pair and check it recovers",
		UsageText: "fray demo [--profile NAME|FILE] [--seed N]\n\n" +
			"Runs the official Go SDK's MCP server and clients on loopback with fray\n" +
			"between them, narrates every fault and reconnection, then gives the verdict.\n" +
			"Needs no setup. (Every option is explained in docs/cli.md.)\n" + exitCodesHelp() + "\n\n" +
			"example:\n   go run ./cmd/fray demo\n   fray demo --profile lossy-resume --seed 7",
		Flags:        append(append(profileFlags(demoProfile), writerFlags()...), append(traceFlags(), logFlags()...)...),
		Action:       runDemo,
		OnUsageError: usageError,
	}
}

func runDemo(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("demo takes no arguments, got %q", c.Args().Slice())
	}
	if c.String("profile") == "" {
		return usagef("--profile \"\": the demo needs a profile to show; give a built-in name (fray profiles list) or a TOML file")
	}
	prof, seed, err := profileOption(c)
	if err != nil {
		return err
	}
	ctx, hard, stop := stopSignals(c.Context, c.App.ErrWriter)
	defer stop()
	ctx, cancel := context.WithTimeoutCause(ctx, demoTimeout, fmt.Errorf("the demo did not finish within %s", demoTimeout))
	defer cancel()

	// The reference server, on a free loopback port.
	srvLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("demo server: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", refpeer.NewHandler(refpeer.ServerOptions{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(srvLn) }()
	defer srv.Close()
	upstream := &url.URL{Scheme: "http", Host: srvLn.Addr().String()}

	// fray in front of it; the narration is the live view, which a
	// progress line would only repeat.
	out, err := newOutputs(c, c.App.ErrWriter)
	if err != nil {
		return err
	}
	stdout := c.App.Writer
	view := newDemoView(stdout)
	eng, page, err := startEngine(c, c.App.ErrWriter, proxy.Options{Upstream: upstream, Watch: view, Drain: proxy.ProxyDrain}, prof, seed)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = eng.Abort()
		return fmt.Errorf("demo proxy: %w", err)
	}
	endpoint := "http://" + ln.Addr().String() + "/mcp"
	p, s := eng.InForce()
	writeWrapped(stdout, "fray demo: ", "  ", fmt.Sprintf("%d clients of the official Go SDK call a tool that streams progress, "+
		"through fray, to the Go SDK's server", demoClients))
	fmt.Fprintf(stdout, "  server %s/mcp   fray %s\n", upstream, endpoint)
	writeWrapped(stdout, fmt.Sprintf("  profile %s (seed %d): ", p.Name, s), "    ", firstSentence(p.Description))
	fmt.Fprintln(stdout)
	var results []demoResult
	sv := eng.ServeWhile(ctx, hard, ln, 2*time.Second, func() { results = runDemoClients(ctx, endpoint) })

	fmt.Fprintln(stdout)
	var failed []string
	for i, r := range results {
		name := r.name(i, view)
		writeWrapped(stdout, name+": ", "    ", r.describe())
		if r.err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", name, r.err))
		}
	}
	fmt.Fprintln(stdout)
	// The demo's clients are its client command: a client that failed
	// fails the verdict, as under fray run.
	cmd := &report.Command{Args: []string{"fray demo", fmt.Sprintf("%d Go SDK clients", demoClients)}}
	if len(failed) > 0 {
		cmd.ExitCode, cmd.Error = 1, "a client of the demo failed: "+strings.Join(failed, "; ")
	}
	r, terr := eng.Finish(sv, cmd)
	if terr != nil {
		fmt.Fprintf(c.App.ErrWriter, "fray: %v\n", terr)
	}
	// Ctrl-C: the verdict says interrupted (the demo's own time limit is
	// another cause).
	out.interrupted = errors.Is(context.Cause(ctx), context.Canceled)
	ferr := errors.Join(out.finish(r), page.write(c.App.ErrWriter))
	writeNextSteps(out.summary, p.Name, c.String("html"))
	if ferr != nil {
		return ferr
	}
	if sv.Err != nil {
		return sv.Err
	}
	return context.Cause(ctx)
}

// demoResult is one client's outcome.
type demoResult struct {
	res *refpeer.Result
	err error
}

// name is "session N" when the client got that far, "client N" before.
func (r demoResult) name(i int, view *demoView) string {
	if r.res != nil && r.res.SessionID != "" {
		if n := view.sessionSeq(r.res.SessionID); n > 0 {
			return fmt.Sprintf("session %d", n)
		}
	}
	return fmt.Sprintf("client %d", i+1)
}

func (r demoResult) describe() string {
	if r.err != nil {
		return "FAILED: " + r.err.Error()
	}
	ids := make([]string, len(r.res.Resumptions))
	for i, id := range r.res.Resumptions {
		ids[i] = shortID(id)
	}
	return fmt.Sprintf("the client got %q and progress %v, resuming with Last-Event-ID %q", r.res.Text, r.res.Progress, ids)
}

// writeNextSteps ends the demo with what to try next: another profile
// (not the one just shown), the run as a timeline, and fray in front of
// the user's own server.
func writeNextSteps(w io.Writer, profile, html string) {
	other := "lossy-resume"
	if profile == other {
		other = "retry-storm"
	}
	page := "fray demo --html demo.html, then open demo.html: this run as a timeline"
	if html != "" {
		page = "open " + html + ": this run as a timeline"
	}
	fmt.Fprintf(w, "\nnext: fray demo --profile %s (fray profiles list names them all)\n", other)
	fmt.Fprintf(w, "      %s\n", page)
	fmt.Fprintf(w, "      fray proxy --upstream URL, for your own server (README.md, docs/cli.md)\n")
}

// runDemoClients runs demoClients reference clients at once, each in its
// own session.
func runDemoClients(ctx context.Context, endpoint string) []demoResult {
	out := make([]demoResult, demoClients)
	closeAfter := demoCloseAfter
	var wg sync.WaitGroup
	for i := range out {
		wg.Go(func() {
			res, err := refpeer.RunClient(ctx, refpeer.ClientOptions{
				Endpoint: endpoint, Count: demoCount, CloseAfter: &closeAfter, Delay: demoDelay,
			})
			out[i] = demoResult{res, err}
		})
	}
	wg.Wait()
	return out
}
