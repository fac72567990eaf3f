package main

import (
	"context"
	"fmt"
	"net"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/frayproxy/fray/proxy/forward"
)

// reverseProxyArg, as the first argument, runs this program as the
// ReverseProxy child: `perf -reverseproxy URL` serves a plain
// httputil.ReverseProxy to URL on a loopback port, prints "listening
// ADDR" and serves until interrupted.
const reverseProxyArg = "-reverseproxy"

// serveReverseProxy is the ReverseProxy child. It is httputil.ReverseProxy
// set up for SSE as its documentation asks (FlushInterval -1: flush after
// every write), with fray's transport, so that the comparison is of the
// proxies and not of their connection pools.
func serveReverseProxy(upstream string) error {
	up, err := url.Parse(upstream)
	if err != nil || up.Host == "" {
		return fmt.Errorf("perf: %s %q: want the upstream's URL", reverseProxyArg, upstream)
	}
	rp := httputil.NewSingleHostReverseProxy(up)
	rp.FlushInterval = -1
	rp.Transport = forward.NewTransport(nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("perf: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Printf("listening %s\n", ln.Addr())
	return forward.Serve(ctx, ln, rp, nil, time.Second)
}
