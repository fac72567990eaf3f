// Package proxy is fray's HTTP reverse proxy: it forwards every exchange to
// one upstream, passes text/event-stream bodies through the SSE reader one
// event block at a time, and classifies each exchange for faults and checks.
//
//	client <-> Proxy (classify, faults, SSE pump) <-> upstream
package proxy

import (
	"errors"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
)

// Options configures a Proxy. The zero value of every field but Upstream is
// usable.
type Options struct {
	// Upstream is the base URL every request is forwarded under. Required.
	Upstream *url.URL
	// Transport carries requests to the upstream. Nil means a transport
	// cloned from http.DefaultTransport.
	Transport http.RoundTripper
	// Logger receives the proxy's log lines. Nil discards them.
	Logger *slog.Logger
	// MaxBlock bounds an SSE event block in bytes; 0 means sse.DefaultMaxBlock.
	MaxBlock int
}

// Proxy is an http.Handler that forwards to Options.Upstream. It is safe for
// concurrent use.
type Proxy struct {
	opts Options
	rp   *httputil.ReverseProxy
}

// New checks opts and returns a Proxy.
func New(opts Options) (*Proxy, error) {
	if opts.Upstream == nil {
		return nil, errors.New("proxy: no upstream URL")
	}
	rp := httputil.NewSingleHostReverseProxy(opts.Upstream)
	rp.FlushInterval = -1
	return &Proxy{opts: opts, rp: rp}, nil
}

// ServeHTTP forwards one exchange.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.rp.ServeHTTP(w, r)
}
