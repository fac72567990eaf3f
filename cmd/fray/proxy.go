package main

import (
	"fmt"
	"net"
	"os/signal"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/frayproxy/fray/proxy"
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
			&cli.IntFlag{Name: "max-block", Value: 1 << 20, Usage: "largest SSE event block parsed, in bytes; past it a stream passes through unparsed"},
		}, logFlags()...),
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
	log, err := newLogger(c, c.App.ErrWriter)
	if err != nil {
		return err
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
	p, err := proxy.New(proxy.Options{
		Upstream:  upstream,
		Transport: proxy.NewTransport(upTLS),
		Logger:    log,
		MaxBlock:  c.Int("max-block"),
	})
	if err != nil {
		return usagef("%v", err)
	}
	ln, err := net.Listen("tcp", c.String("listen"))
	if err != nil {
		return usagef("--listen %q: %v", c.String("listen"), err)
	}
	scheme := "http"
	if lnTLS != nil {
		scheme = "https"
	}
	fmt.Fprintf(c.App.ErrWriter, "fray: proxying %s://%s -> %s\n", scheme, ln.Addr(), upstream)
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return proxy.Serve(ctx, ln, p, lnTLS, 5*time.Second)
}
