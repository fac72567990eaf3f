package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy"
	"github.com/frayproxy/fray/proxy/admin"
	"github.com/frayproxy/fray/proxy/report"
	"github.com/frayproxy/fray/proxy/trace"
)

func proxyCommand() *cli.Command {
	return &cli.Command{
		Name:  "proxy",
		Usage: "forward a client to an MCP server, SSE event by event",
		UsageText: "fray proxy --upstream URL [--listen ADDR] [options]\n\n" +
			"example:\n   fray proxy --upstream http://127.0.0.1:3000 --listen 127.0.0.1:7070\n" +
			"   (then point the client at http://127.0.0.1:7070/mcp)",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "upstream", Usage: "base URL of the MCP server (http or https); a client path P goes to URL+P"},
			&cli.StringFlag{Name: "listen", Value: "127.0.0.1:7070", Usage: "address to serve clients on"},
			&cli.StringFlag{Name: "upstream-ca", Usage: "PEM file of extra CA certificates trusted for an https upstream"},
			&cli.StringFlag{Name: "tls-cert", Usage: "certificate PEM file: serve clients over TLS (with --tls-key)"},
			&cli.StringFlag{Name: "tls-key", Usage: "private key PEM file for --tls-cert"},
			&cli.StringFlag{Name: "profile", Usage: "fault profile: a built-in name (fray profiles list) or a TOML file"},
			&cli.Uint64Flag{Name: "seed", Usage: "seed for the profile's random choices, overriding the profile's own"},
			&cli.BoolFlag{Name: "log-faults", Usage: "log every fault decision: which fault fired on which session, stream and event"},
			&cli.StringFlag{Name: "admin", Usage: "serve the JSON admin API on ADDR (a bare port means loopback); off when empty"},
			&cli.StringFlag{Name: "admin-token", EnvVars: []string{"FRAY_ADMIN_TOKEN"},
				Usage: "bearer token every admin API request must carry (16+ characters); required when --admin is beyond loopback; prefer the environment variable, which ps does not show"},
			&cli.IntFlag{Name: "max-exchanges", Usage: "most exchanges in flight at once, open streams included; past it new ones get 503 with Retry-After (0: no limit)"},
			&cli.DurationFlag{Name: "response-timeout", Usage: "longest wait for the upstream's response head, e.g. 30s; past it the client gets 504 (0: as long as the client waits)"},
			&cli.IntFlag{Name: "max-block", Value: 1 << 20, Usage: "largest SSE event block parsed, in bytes; past it a stream passes through unparsed"},
			&cli.DurationFlag{Name: "report-every", Usage: "soak mode: also rewrite the --report file every `DURATION` while running (atomically)"},
		}, append(append(reportFlags(), traceFlags()...), logFlags()...)...),
		Action:       runProxy,
		OnUsageError: usageError,
	}
}

func runProxy(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("proxy takes no arguments, got %q", c.Args().Slice())
	}
	if c.String("upstream") == "" {
		return usagef("proxy needs --upstream URL, the MCP server to forward to")
	}
	out := newOutputs(c, c.App.ErrWriter)
	errw := out.stderr(c.App.ErrWriter)
	log, err := newLogger(c, errw)
	if err != nil {
		return err
	}
	if c.IsSet("report-every") && (c.Duration("report-every") <= 0 || c.String("report") == "") {
		return usagef("--report-every %s: needs --report FILE and a positive interval", c.Duration("report-every"))
	}
	upstream, err := proxy.ParseUpstream(c.String("upstream"))
	if err != nil {
		return usagef("--upstream: %v", err)
	}
	if c.Int("max-block") < 1024 {
		return usagef("--max-block %d: must be at least 1024 bytes", c.Int("max-block"))
	}
	upTLS, err := proxy.UpstreamTLS(c.String("upstream-ca"))
	if err != nil {
		return usagef("--upstream-ca: %v", err)
	}
	lnTLS, err := proxy.ListenerTLS(c.String("tls-cert"), c.String("tls-key"))
	if err != nil {
		return usagef("%v", err)
	}
	if c.Int("max-exchanges") < 0 || c.Duration("response-timeout") < 0 {
		return usagef("--max-exchanges %d, --response-timeout %s: must not be negative", c.Int("max-exchanges"), c.Duration("response-timeout"))
	}
	active, err := loadActive(c)
	if err != nil {
		return err
	}
	if active == nil && c.String("admin") != "" {
		// The admin API serves metrics and can swap a profile in later:
		// start with an empty one, which injects nothing.
		if active, err = profiles.NewActive(&profiles.Profile{Name: "none"}, nil); err != nil {
			return err
		}
	}
	opts := proxy.Options{
		Upstream:  upstream,
		Transport: proxy.NewTransport(upTLS),
		Logger:    log,
		MaxBlock:  c.Int("max-block"),
		LogFaults: c.Bool("log-faults"),

		MaxExchanges:          c.Int("max-exchanges"),
		ResponseHeaderTimeout: c.Duration("response-timeout"),
	}
	if active != nil {
		opts.Faults = active
	}
	met := withMetrics(c, &opts)
	traced, endTrace, err := openTrace(c, active)
	if err != nil {
		return err
	}
	defer endTrace(trace.End{}) // on an early return; the run's own end, below, comes first
	eng, err := newEngine(opts, active, traced)
	if err != nil {
		return usagef("%v", err)
	}
	met.attach(eng)
	ln, err := net.Listen("tcp", c.String("listen"))
	if err != nil {
		return usagef("--listen %q: %v", c.String("listen"), err)
	}
	defer ln.Close()
	ctx, hard, stop := stopSignals(c.Context)
	defer stop()
	adminDone, err := startAdmin(ctx, c, active, met)
	if err != nil {
		return err
	}
	scheme := "http"
	if lnTLS != nil {
		scheme = "https"
	}
	line := fmt.Sprintf("fray: proxying %s://%s -> %s", scheme, ln.Addr(), upstream)
	if active != nil {
		line += fmt.Sprintf(" (profile %s, seed %d)", active.Profile().Name, active.Seed())
	}
	fmt.Fprintln(errw, line)
	stopLoops := make(chan struct{})
	waitProgress := out.runProgress(eng.live, stopLoops)
	waitSnapshots := out.runSnapshots(c.Duration("report-every"),
		func() report.Report { return eng.snapshot(eng.elapsed()) }, stopLoops, errw)
	st := eng.serve(ctx, hard, ln, lnTLS, proxyDrain)
	close(stopLoops)
	waitSnapshots()
	waitProgress()
	err = st.err
	if aerr := <-adminDone; err == nil {
		err = aerr
	}
	if terr := endTrace(trace.End{At: st.at, Drained: st.drained}); err == nil && terr != nil {
		err = cli.Exit(terr.Error(), exitFindings)
	}
	if !st.drained {
		fmt.Fprintf(errw, "fray: %d exchanges were still open at shutdown and were ended by fray; what they still owed is not judged\n", st.open)
	}
	ferr := out.finish(eng.final(st))
	if err != nil {
		return err
	}
	return ferr
}

// proxyDrain is how long exchanges in flight get to finish after SIGINT or
// SIGTERM.
const proxyDrain = 5 * time.Second

// loadActive resolves --profile and --seed into the active fault plan; nil
// when no profile is given.
func loadActive(c *cli.Context) (*profiles.Active, error) {
	name := c.String("profile")
	if name == "" {
		if c.IsSet("seed") {
			return nil, usagef("--seed %d: there is no --profile to seed", c.Uint64("seed"))
		}
		return nil, nil
	}
	return resolveActive(c, "--profile", name, "")
}

// resolveActive resolves the profile name given to flag (a built-in or a
// file) into an active plan, seeded by --seed when set; want, when not
// empty, says what else flag takes, for the error.
func resolveActive(c *cli.Context, flag, name, want string) (*profiles.Active, error) {
	prof, err := profiles.Resolve(name)
	if err != nil {
		if want != "" {
			return nil, usagef("%s %s: %s\n%v", flag, name, want, err)
		}
		return nil, usagef("%s %s:\n%v", flag, name, err)
	}
	var seed *uint64
	if c.IsSet("seed") {
		s := c.Uint64("seed")
		seed = &s
	}
	active, err := profiles.NewActive(prof, seed)
	if err != nil {
		return nil, usagef("%s %s: %v", flag, name, err)
	}
	return active, nil
}

// startAdmin serves the admin API when --admin is given. The returned
// channel yields the server's result once ctx ends.
func startAdmin(ctx context.Context, c *cli.Context, active *profiles.Active, met *proxyMetrics) (<-chan error, error) {
	done := make(chan error, 1)
	addr := c.String("admin")
	if addr == "" {
		done <- nil
		return done, nil
	}
	token := c.String("admin-token")
	ln, err := admin.Listen(ctx, addr, token)
	if errors.Is(err, admin.ErrTokenRequired) {
		return nil, usagef("--admin %s: %v; give a token with --admin-token or FRAY_ADMIN_TOKEN, or bind the admin API to loopback (a bare port does)", addr, err)
	}
	if err != nil {
		return nil, usagef("--admin %q: %v", addr, err)
	}
	guarded := ""
	if token != "" {
		guarded = " (bearer token required)"
	}
	fmt.Fprintf(c.App.ErrWriter, "fray: admin API on http://%s%s\n", ln.Addr(), guarded)
	h := admin.RequireToken(adminHandler(active, met), token)
	go func() { done <- proxy.Serve(ctx, ln, h, nil, time.Second) }()
	return done, nil
}
