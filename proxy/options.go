package proxy

import (
	"crypto/tls"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"time"

	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/forward"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/trace"
)

// Options configures an Engine. Upstream is required; the zero value of
// every other field is usable and says what it means below.
type Options struct {
	// Upstream is the base URL every request is forwarded under: a client
	// path P goes to Upstream's path joined with P. http or https.
	Upstream *url.URL
	// UpstreamTLS is the TLS configuration for an https upstream; nil
	// means the system roots. Transport, when set, replaces the transport
	// built from it.
	UpstreamTLS *tls.Config
	Transport   http.RoundTripper

	// Profile is the fault profile in force at the start; nil injects no
	// fault. Seed, when not nil, seeds it (and every profile swapped in
	// later) instead of the profile's own seed.
	Profile *profiles.Profile
	Seed    *uint64
	// Mutable keeps a profile in force even when Profile is nil (an empty
	// one), so that Swap and the admin API can put one in later.
	Mutable bool
	// Changes are profile changes to make at given times, as a trace
	// recorded them (fray run --reproduce).
	Changes []Change
	// Checks override check severities over the profile's [checks] table,
	// for this profile and every profile swapped in.
	Checks map[string]checks.Severity
	// AnswerDeadline is the verifier's: how long a forwarded request may
	// stay unanswered after its session's last activity; 0 means 30 s.
	AnswerDeadline time.Duration

	// Trace, when not nil, records every observation; the Engine writes
	// its end line and closes it in Finish. See trace.Create.
	Trace Trace
	// Metrics keeps Prometheus metrics of the traffic and the findings,
	// served by AdminHandler at /metrics.
	Metrics bool
	// Watch sees every observation too (a narration, a test's probe), in
	// the order the verifier does; events reach it from the engine's
	// queue, shortly after they left, not from the stream's goroutine. It
	// must be safe for concurrent use and must not block.
	Watch observe.Observer

	// The proxy's limits; see forward.Options for each.
	MaxBlock              int
	MaxRequestBody        int64
	MaxSessions           int
	MaxExchanges          int
	ResponseHeaderTimeout time.Duration
	RequestBodyTimeout    time.Duration
	// Drain is how long exchanges in flight get to finish once Serve's
	// context ends (standalone GET streams, which never end by
	// themselves, are not waited for); 0 means 5 s.
	Drain time.Duration

	// Logger receives log lines; nil discards them. LogFaults logs every
	// fault decision at info level.
	Logger    *slog.Logger
	LogFaults bool
	// Clock gives the proxy its time and timers; nil means the real clock.
	Clock forward.Clock
}

// Trace is where an Engine records observations: a *trace.Writer.
type Trace interface {
	observe.Observer
	// Finish writes the end line and closes the trace.
	Finish(end trace.End) error
}

// Change is a change of the profile in force to make at a time of the run:
// At is the time since the Engine started.
type Change struct {
	At time.Duration
	// Profile is the profile swapped in; nil for enable and disable.
	Profile *profiles.Profile
	// Fault and On switch one fault of the profile in force, when
	// Profile is nil.
	Fault int
	On    bool
}

// DefaultDrain is the Drain of the zero Options.
const DefaultDrain = 5 * time.Second

var errNoUpstream = errors.New("proxy: no upstream URL")

// proxyOptions are the proxy's options, without its observer and plan.
func (o *Options) proxyOptions() forward.Options {
	return forward.Options{
		Upstream:              o.Upstream,
		Transport:             o.Transport,
		UpstreamTLS:           o.UpstreamTLS,
		Logger:                o.Logger,
		MaxBlock:              o.MaxBlock,
		MaxRequestBody:        o.MaxRequestBody,
		MaxSessions:           o.MaxSessions,
		LogFaults:             o.LogFaults,
		Clock:                 o.Clock,
		MaxExchanges:          o.MaxExchanges,
		ResponseHeaderTimeout: o.ResponseHeaderTimeout,
		RequestBodyTimeout:    o.RequestBodyTimeout,
	}
}

// severities are the verifier's severities under profile p (nil for
// none): its [checks] table, with over's overrides on top.
func severities(p *profiles.Profile, over map[string]checks.Severity) map[string]checks.Severity {
	var out map[string]checks.Severity
	if p != nil {
		out = maps.Clone(p.Checks)
	}
	if len(over) > 0 && out == nil {
		out = make(map[string]checks.Severity, len(over))
	}
	maps.Copy(out, over)
	return out
}
