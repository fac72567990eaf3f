package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/frayproxy/fray/proxy"
	"github.com/frayproxy/fray/proxy/admin"
	"github.com/frayproxy/fray/proxy/forward"
)

func proxyCommand() *cli.Command {
	return &cli.Command{
		Name:  "proxy",
		Usage: "forward a client to an MCP server, SSE event by event",
		UsageText: "fray proxy --upstream URL [--listen ADDR] [options]\n" +
			"(every option is explained in docs/cli.md)\n" + exitCodesHelp() + "\n\n" +
			"example:\n   fray proxy --upstream http://127.0.0.1:3000 --listen 127.0.0.1:7070\n" +
			"   (then point the client at http://127.0.0.1:7070/mcp)",
		Flags: append(append([]cli.Flag{
			&cli.StringFlag{Name: "upstream", Usage: upstreamUsage},
			&cli.StringFlag{Name: "listen", Value: "127.0.0.1:7070", Usage: "listen on `ADDR`"},
			&cli.StringFlag{Name: "upstream-ca", Usage: "extra CA certificates (PEM `FILE`) to trust"},
			&cli.StringFlag{Name: "tls-cert", Usage: "serve TLS with this certificate `FILE`"},
			&cli.StringFlag{Name: "tls-key", Usage: "private key `FILE` for --tls-cert"},
			&cli.BoolFlag{Name: "log-faults", Usage: "log every fault decision and skipped draw"},
			&cli.StringFlag{Name: "admin", Usage: "serve the admin API on `ADDR`"},
			&cli.StringFlag{Name: "admin-token", EnvVars: []string{"FRAY_ADMIN_TOKEN"},
				Usage: "admin API bearer `TOKEN`"},
			&cli.IntFlag{Name: "max-exchanges", DefaultText: "none", Usage: "most open exchanges, then 503"},
			&cli.DurationFlag{Name: "response-timeout", DefaultText: "none", Usage: "wait for a head, then 504"},
			&cli.DurationFlag{Name: "request-body-timeout", Value: forward.DefaultRequestBodyTimeout, Usage: "wait for a body, then 408"},
			&cli.IntFlag{Name: "max-block", Value: proxy.DefaultProxyMaxBlock, DefaultText: "1048576 bytes", Usage: "largest event parsed"},
			&cli.DurationFlag{Name: "report-every", DefaultText: "off", Usage: "rewrite --report every `DURATION`"},
		}, profileFlags("")...), append(append(reportFlags(), traceFlags()...), logFlags()...)...),
		Action:       runProxy,
		OnUsageError: usageError,
	}
}

// proxySettings are fray proxy's own flags, checked, as engine options.
func proxySettings(c *cli.Context) (proxy.Options, error) {
	var opts proxy.Options
	if c.NArg() > 0 {
		return opts, usagef("proxy takes no arguments, got %q", c.Args().Slice())
	}
	if c.String("upstream") == "" {
		return opts, usagef("proxy needs --upstream URL, the MCP server to forward to")
	}
	if c.IsSet("report-every") && (c.Duration("report-every") <= 0 || c.String("report") == "" || c.String("report") == stdoutPath) {
		return opts, usagef("--report-every %s: needs --report FILE (a file, not stdout) and a positive interval", c.Duration("report-every"))
	}
	upstream, err := forward.ParseUpstream(c.String("upstream"))
	if err != nil {
		return opts, usagef("--upstream: %v", err)
	}
	if err := checkListen(c.String("listen"), upstream); err != nil {
		return opts, err
	}
	if c.Int("max-block") < 1024 {
		return opts, usagef("--max-block %d: must be at least 1024 bytes", c.Int("max-block"))
	}
	if c.Int("max-exchanges") < 0 || c.Duration("response-timeout") < 0 {
		return opts, usagef("--max-exchanges %d, --response-timeout %s: must not be negative", c.Int("max-exchanges"), c.Duration("response-timeout"))
	}
	if c.Duration("request-body-timeout") < 0 {
		return opts, usagef("--request-body-timeout %s: must not be negative", c.Duration("request-body-timeout"))
	}
	tlsConfig, err := forward.UpstreamTLS(c.String("upstream-ca"))
	if err != nil {
		return opts, usagef("--upstream-ca: %v", err)
	}
	// The same assembly as the scale benchmark and the soak test measure;
	// startEngine adds the profile, the logger and the trace.
	opts = proxy.ProxyOptions(proxy.ProxyCommand{
		Upstream:           upstream,
		UpstreamTLS:        tlsConfig,
		MaxBlock:           c.Int("max-block"),
		MaxExchanges:       c.Int("max-exchanges"),
		ResponseTimeout:    c.Duration("response-timeout"),
		RequestBodyTimeout: c.Duration("request-body-timeout"),
		Admin:              c.String("admin") != "",
	})
	return opts, nil
}

func runProxy(c *cli.Context) error {
	set, err := proxySettings(c)
	if err != nil {
		return err
	}
	lnTLS, err := forward.ListenerTLS(c.String("tls-cert"), c.String("tls-key"))
	if err != nil {
		return usagef("%v", err)
	}
	prof, seed, err := profileOption(c)
	if err != nil {
		return err
	}
	out, err := newOutputs(c, c.App.ErrWriter)
	if err != nil {
		return err
	}
	errw := out.stderr(c.App.ErrWriter)
	eng, page, err := startEngine(c, errw, set, prof, seed)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", admin.Addr(c.String("listen")))
	if err != nil {
		_ = eng.Abort()
		return usagef("--listen %q: %v", c.String("listen"), err)
	}
	defer ln.Close()
	ctx, hard, stop := stopSignals(c.Context, errw)
	defer stop()
	adminDone, err := startAdmin(ctx, c, eng)
	if err != nil {
		_ = eng.Abort()
		return err
	}
	scheme := "http"
	if lnTLS != nil {
		scheme = "https"
	}
	upstream := c.String("upstream")
	line := fmt.Sprintf("proxying %s://%s -> %s", scheme, ln.Addr(), upstream)
	if p, s := eng.InForce(); p != nil {
		line += fmt.Sprintf(" (profile %s, seed %d)", p.Name, s)
	}
	sayf(c, errw, "%s", line)
	sayf(c, errw, "%s", clientHint(scheme+"://"+ln.Addr().String(), upstream))
	stopLoops := make(chan struct{})
	waitProgress := out.runProgress(eng.Live, stopLoops)
	waitSnapshots := out.runSnapshots(c.Duration("report-every"), eng.Report, stopLoops, errw)
	st := eng.Serve(ctx, hard, ln, lnTLS)
	close(stopLoops)
	waitSnapshots()
	waitProgress()
	err = st.Err
	if aerr := <-adminDone; err == nil {
		err = aerr
	}
	if !st.Drained {
		sayf(c, errw, "%d exchanges were still open at shutdown and were ended by fray; what they still owed is not judged", st.Open)
	}
	r, terr := eng.Finish(st, nil)
	if err == nil && terr != nil {
		err = cli.Exit(terr.Error(), exitNoStart)
	}
	ferr := out.finish(r)
	if perr := page.write(errw); ferr == nil {
		ferr = perr
	}
	if err != nil {
		return err
	}
	return ferr
}

// startAdmin serves the admin API when --admin is given. The returned
// channel yields the server's result once ctx ends.
func startAdmin(ctx context.Context, c *cli.Context, eng *proxy.Engine) (<-chan error, error) {
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
	sayf(c, c.App.ErrWriter, "admin API on http://%s%s", ln.Addr(), guarded)
	// Pages a browser shows are refused first, whatever the token.
	h := admin.SameOrigin(admin.RequireToken(eng.AdminHandler(), token), ln.Addr(), addr)
	go func() { done <- forward.Serve(ctx, ln, h, nil, time.Second) }()
	return done, nil
}

// upstreamUsage is --upstream's help, the same in every command. Paths
// go unchanged to the same path on the server; docs/cli.md says so at
// length.
const upstreamUsage = "the MCP server's base or endpoint `URL`"

// clientHint says which URL a client should use: the upstream's, with
// fray's address, since every path goes to the same path on the server.
func clientHint(frayURL, upstream string) string {
	u, err := url.Parse(upstream)
	if err != nil || u.Path == "" || u.Path == "/" {
		return fmt.Sprintf("point clients at %s/PATH for the server's %s/PATH (e.g. %s/mcp)", frayURL, strings.TrimSuffix(upstream, "/"), frayURL)
	}
	return fmt.Sprintf("point clients at %s for the server's %s (every path goes to the same path on the server)", frayURL+u.RequestURI(), upstream)
}
