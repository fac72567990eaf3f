package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/frayproxy/fray/proxy"
	"github.com/frayproxy/fray/proxy/forward"
	"github.com/frayproxy/fray/proxy/report"
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:  "run",
		Usage: "run a client command through fray and give a verdict",
		UsageText: "fray run --upstream URL [--server CMD] [options] -- CLIENT [ARGS...]\n\n" +
			"The client finds fray in $FRAY_URL: the --upstream URL with fray's address.\n" +
			exitCodesHelp() + "\n\n" +
			"example:\n   fray run --upstream http://127.0.0.1:3000/mcp --server 'node server.mjs' \\\n" +
			"     --profile polling-server --junit fray.xml \\\n" +
			"     -- sh -c 'node client.mjs \"$FRAY_URL\"'",
		Flags: append(append(append(clientFlags(),
			&cli.DurationFlag{Name: "client-timeout", DefaultText: "none", Usage: "stop the client after `TIME`"},
			&cli.BoolFlag{Name: "log-faults", Usage: "log every fault decision and skipped draw"},
			&cli.StringFlag{Name: "reproduce", Usage: "rerun the profile and seed of trace `FILE`"},
			&cli.StringFlag{Name: "probe", Usage: probeUsage},
		), profileFlags("")...), append(append(reportFlags(), traceFlags()...), logFlags()...)...),
		Action:       runRun,
		OnUsageError: usageError,
	}
}

// clientFlags are the flags of every command that runs a client command
// in front of an upstream; between come after --server.
func clientFlags(between ...cli.Flag) []cli.Flag {
	return append(append([]cli.Flag{
		&cli.StringFlag{Name: "upstream", Usage: upstreamUsage},
		&cli.StringFlag{Name: "server", Usage: "shell `CMD` that starts the server"},
	}, between...),
		&cli.StringFlag{Name: "listen", Value: "127.0.0.1:0", DefaultText: "a free port", Usage: "listen on `ADDR`"},
		&cli.DurationFlag{Name: "settle", Value: 2 * time.Second, Usage: "grace for streams after the client"},
		&cli.DurationFlag{Name: "wait", Value: 30 * time.Second, Usage: "how long to wait for the upstream"},
	)
}

// runSettings are fray run's flags, checked.
type runSettings struct {
	client   []string
	endpoint *url.URL // the --upstream URL as given
	origin   *url.URL // its scheme and host: what fray forwards to
	settle   time.Duration
	wait     time.Duration
	// clientTimeout bounds each run of the client command; 0: no bound.
	// timeoutFrom names where the bound comes from, for the error that
	// stops the command; "" is --client-timeout.
	clientTimeout time.Duration
	timeoutFrom   string
}

// runFlags checks the flags and the client command of fray run, sweep and
// shrink.
func runFlags(c *cli.Context) (runSettings, error) {
	s := runSettings{client: c.Args().Slice(), settle: c.Duration("settle"), wait: c.Duration("wait"), clientTimeout: c.Duration("client-timeout")}
	if name := c.Command.Name; len(s.client) == 0 {
		return s, usagef("%s needs a client command, e.g. fray %s --upstream URL -- node client.mjs", name, name)
	}
	if c.String("upstream") == "" {
		return s, usagef("%s needs --upstream URL, the server's MCP endpoint", c.Command.Name)
	}
	if _, err := forward.ParseUpstream(c.String("upstream")); err != nil {
		return s, usagef("--upstream: %v", err)
	}
	s.endpoint, _ = url.Parse(c.String("upstream"))
	s.origin = &url.URL{Scheme: s.endpoint.Scheme, Host: s.endpoint.Host}
	if err := checkListen(c.String("listen"), s.endpoint); err != nil {
		return s, err
	}
	if s.settle < 0 {
		return s, usagef("--settle %s: must not be negative", s.settle)
	}
	if s.wait <= 0 {
		return s, usagef("--wait %s: must be positive", s.wait)
	}
	if s.clientTimeout < 0 || c.IsSet("client-timeout") && s.clientTimeout == 0 {
		return s, usagef("--client-timeout %s: must be positive (leave it out for no bound)", s.clientTimeout)
	}
	return s, nil
}

// frayURL is the endpoint's URL with fray's address: fray forwards to the
// upstream's origin, so the path and query stay as they are.
func (s runSettings) frayURL(addr net.Addr) string {
	u := *s.endpoint
	u.Scheme, u.Host = "http", addr.String()
	return u.String()
}

// startUpstream starts the --server command line (none when "") once
// nothing else answers at the upstream's address, and waits until the
// upstream accepts connections. The server it returns (nil for none) is
// to be stopped, even with an error. The server's output goes to errw.
func startUpstream(ctx context.Context, line string, set runSettings, errw io.Writer, say sayFunc) (*serverProc, error) {
	var srv *serverProc
	if line != "" {
		if err := portTaken(ctx, set.endpoint, line); err != nil {
			return nil, err
		}
		var err error
		if srv, err = startServer(line, errw); err != nil {
			return nil, cli.Exit(err.Error(), exitNoStart)
		}
	}
	return srv, waitReady(ctx, set.endpoint, set.wait, srv, say)
}

func runRun(c *cli.Context) error {
	if c.IsSet("probe") {
		return runProbes(c)
	}
	set, err := runFlags(c)
	if err != nil {
		return err
	}
	prof, seed, changes, err := runProfile(c)
	if err != nil {
		return err
	}
	out, err := newOutputs(c, c.App.ErrWriter)
	if err != nil {
		return err
	}
	errw := out.stderr(c.App.ErrWriter)
	stdout := c.App.Writer
	if out.progress != nil {
		stdout = out.progress.Around(stdout)
	}
	eng, page, err := startEngine(c, errw, proxy.Options{Upstream: set.origin, Changes: changes, Drain: proxy.ProxyDrain}, prof, seed)
	if err != nil {
		return err
	}
	ctx, hard, stop := stopSignals(c.Context, errw)
	defer stop()
	run, err := runClientOnce(c, runCtx{ctx, hard}, eng, set, stdout, errw, func(frayURL string) func() {
		line := fmt.Sprintf("running %q with FRAY_URL=%s -> %s", strings.Join(set.client, " "), frayURL, set.endpoint)
		if p, s := eng.InForce(); p != nil {
			line += fmt.Sprintf(" (profile %s, seed %d)", p.Name, s)
		}
		sayf(c, errw, "%s", line)
		if p := set.endpoint.Path; p == "" || p == "/" {
			sayf(c, errw, "FRAY_URL has no path, as --upstream has none; give --upstream the endpoint (e.g. %s/mcp) if the client takes FRAY_URL as its MCP endpoint", strings.TrimSuffix(set.endpoint.String(), "/"))
		}
		stopLoops := make(chan struct{})
		waitProgress := out.runProgress(eng.Live, stopLoops)
		return func() { close(stopLoops); waitProgress() }
	})
	if err != nil {
		return err
	}
	// Interrupted: the reports are whole, and the verdict says so.
	out.interrupted = ctx.Err() != nil
	ferr := out.finish(run.report)
	if perr := page.write(errw); ferr == nil {
		ferr = perr
	}
	if run.serverDied != nil {
		return run.serverDied
	}
	if ferr != nil {
		return ferr
	}
	return run.served.Err
}

// runCtx are the contexts of fray run's signals: soft ends at the first,
// hard at the second.
type runCtx struct{ soft, hard context.Context }

// clientRun is how one run of the client command through an engine ended.
type clientRun struct {
	report report.Report
	served proxy.Stopped
	// serverDied is the error of a --server command that ended before
	// the run was stopped, nil otherwise.
	serverDied error
}

// runClientOnce runs the client command once through eng: it listens
// beside the endpoint, starts --server, serves while the command runs
// (its output to stdout and errw), stops the server and ends eng's run.
// around, when set, is called with fray's URL before the command starts,
// and what it returns once the command has ended. On error eng is
// aborted.
func runClientOnce(c *cli.Context, rc runCtx, eng *proxy.Engine, set runSettings, stdout, errw io.Writer, around func(frayURL string) func()) (clientRun, error) {
	ln, err := listenBeside(net.Listen, c.String("listen"), set.endpoint)
	if err != nil {
		_ = eng.Abort()
		return clientRun{}, usagef("--listen %q: %v", c.String("listen"), err)
	}
	defer ln.Close()
	srv, err := startUpstream(rc.soft, c.String("server"), set, errw, func(f string, a ...any) { sayf(c, errw, f, a...) })
	defer srv.stop()
	if err != nil {
		_ = eng.Abort()
		return clientRun{}, err
	}
	frayURL := set.frayURL(ln.Addr())
	after := func() {}
	if around != nil {
		after = around(frayURL)
	}
	// The client's connections close with it; the ends get --settle to be
	// observed.
	var res clientResult
	sv := eng.ServeWhile(rc.soft, rc.hard, ln, set.settle, func() {
		cctx, release := clientContext(rc.soft, set, srv)
		defer release()
		res = runClient(cctx, set.client, frayURL, c.App.Reader, stdout, errw)
	})
	after()
	died := srv.exitedEarly()
	srv.stop()
	run := clientRun{report: finishRun(c, errw, eng, sv, set.client, res), served: sv}
	if died && rc.soft.Err() == nil {
		run.serverDied = srv.diedError()
	}
	return run, nil
}

// finishRun ends eng's run with how the client command args ended; a
// trace that could not be ended is said on errw.
func finishRun(c *cli.Context, errw io.Writer, eng *proxy.Engine, sv proxy.Stopped, args []string, res clientResult) report.Report {
	cmd := &report.Command{Args: args, ExitCode: res.code}
	if res.err != nil {
		cmd.Error = res.err.Error()
	}
	r, terr := eng.Finish(sv, cmd)
	if terr != nil {
		sayf(c, errw, "%v", terr)
	}
	return r
}
