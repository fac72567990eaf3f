package proxy

import (
	"crypto/tls"
	"log/slog"
	"net/url"
	"time"

	"github.com/frayproxy/fray/profiles"
)

// ProxyCommand is what `fray proxy` is told on its command line, its flags
// checked: ProxyOptions turns it into the Options that command runs the
// Engine with, so that whatever else runs "fray as fray proxy runs it" (the
// scale benchmark, the soak test) runs the same stack. The zero value of
// each field is the flag's default, except Upstream, which is required.
type ProxyCommand struct {
	// Upstream is --upstream: only its scheme and host are forwarded to,
	// every client path going to the same path on the server.
	Upstream *url.URL
	// UpstreamTLS is what --upstream-ca makes of the CA file; nil, the
	// system roots.
	UpstreamTLS *tls.Config
	// MaxBlock is --max-block; 0 means the flag's default, 1 MiB.
	MaxBlock int
	// MaxExchanges is --max-exchanges; 0, no bound.
	MaxExchanges int
	// ResponseTimeout is --response-timeout; 0, no bound.
	ResponseTimeout time.Duration
	// RequestBodyTimeout is --request-body-timeout as given: 0 means no
	// bound, as the flag says; the flag's default is
	// forward.DefaultRequestBodyTimeout.
	RequestBodyTimeout time.Duration
	// Admin says --admin was given: the metrics are kept for the admin
	// API, which can also swap a profile in later.
	Admin bool
	// Profile and Seed are --profile and --seed; nil for none.
	Profile *profiles.Profile
	Seed    *uint64
	// Logger is what --log-format and --log-level build; LogFaults is
	// --log-faults.
	Logger    *slog.Logger
	LogFaults bool
	// Trace is the writer --trace opens; nil without --trace.
	Trace Trace
}

// ProxyDrain is how long exchanges in flight get to finish after `fray
// proxy` is told to stop.
const ProxyDrain = 5 * time.Second

// ProxyOptions are the Options `fray proxy` runs the Engine with for the
// command line c: the verifier always, the metrics with --admin, the trace
// with --trace.
func ProxyOptions(c ProxyCommand) Options {
	opts := Options{
		UpstreamTLS:           c.UpstreamTLS,
		MaxBlock:              c.MaxBlock,
		MaxExchanges:          c.MaxExchanges,
		ResponseHeaderTimeout: c.ResponseTimeout,
		RequestBodyTimeout:    c.RequestBodyTimeout,
		// The admin API serves metrics and can swap a profile in later.
		Metrics:   c.Admin,
		Mutable:   c.Admin,
		Drain:     ProxyDrain,
		Profile:   c.Profile,
		Seed:      c.Seed,
		Logger:    c.Logger,
		LogFaults: c.LogFaults,
		Trace:     c.Trace,
	}
	if c.Upstream != nil {
		// Every path goes to the same path on the upstream's origin, as
		// in fray run: the upstream's own path only says where clients
		// point.
		opts.Upstream = &url.URL{Scheme: c.Upstream.Scheme, Host: c.Upstream.Host}
	}
	if opts.MaxBlock == 0 {
		opts.MaxBlock = DefaultProxyMaxBlock
	}
	if opts.RequestBodyTimeout == 0 {
		opts.RequestBodyTimeout = -1 // no bound, as the flag says
	}
	return opts
}

// DefaultProxyMaxBlock is --max-block's default: the largest SSE event
// block fray parses.
const DefaultProxyMaxBlock = 1 << 20
