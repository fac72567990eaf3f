package proxy

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy/admin"
	"github.com/frayproxy/fray/proxy/forward"
	"github.com/frayproxy/fray/proxy/metrics"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
	"github.com/frayproxy/fray/proxy/trace"
	"github.com/frayproxy/fray/proxy/verify"
)

// Engine is one fray: a proxy with its verifier, trace, metrics and admin
// API. It is safe for concurrent use. The zero value is not usable; call
// New. Once events flow it holds one goroutine of its own, which passes
// them to the verifier and the rest; it ends when observation stops (the
// end of Serve, or Stop).
type Engine struct {
	opts     Options
	proxy    *forward.Proxy
	verifier *verify.Verifier
	active   *profiles.Active // nil when no profile can be in force
	metrics  *metrics.Metrics // nil without Options.Metrics
	// queue passes the observations on to the verifier, the trace, the
	// metrics and the watcher, the events from a goroutine of its own; it
	// is closed at shutdown, so that fray's own shutdown never reaches the
	// verifier as something a peer did.
	queue   *observe.Queue
	flight  *inflight
	handler http.Handler
	clock   forward.Clock
	start   time.Time

	// changeMu orders profile changes, so that the observations of
	// changes come in the order the changes were made.
	changeMu sync.Mutex
	stopped  sync.Once
	timers   []func() bool
	// onShutdown, when set, is called as Serve's shutdown begins, before
	// the drain; tests use it to act at that moment.
	onShutdown func()
}

// Stopped is how Serve ended.
type Stopped struct {
	// At is when observation stopped: what the final report is made as of,
	// the time since the Engine started.
	At time.Duration
	// Drained: no exchange but standalone GET streams was open then, so
	// every obligation still open can be judged.
	Drained bool
	// Open is how many exchanges fray ended itself at shutdown.
	Open int
	// Err is the server's error, nil for a clean stop.
	Err error
}

var _ admin.Control = (*Engine)(nil)

// New checks opts and assembles an Engine. Nothing is served until Serve
// is called or Handler is mounted.
func New(opts Options) (*Engine, error) {
	if opts.Upstream == nil {
		return nil, errNoUpstream
	}
	if opts.Drain <= 0 {
		opts.Drain = DefaultDrain
	}
	e := &Engine{opts: opts, flight: newInflight(), clock: opts.Clock}
	if e.clock == nil {
		e.clock = forward.SystemClock
	}
	if opts.Profile != nil || opts.Mutable {
		p := opts.Profile
		if p == nil {
			p = &profiles.Profile{Name: "none"}
		}
		active, err := profiles.NewActive(p, opts.Seed)
		if err != nil {
			return nil, fmt.Errorf("profile %s: %w", p.Name, err)
		}
		e.active = active
	}
	vopts := verify.Options{AnswerDeadline: opts.AnswerDeadline, Severity: severities(nil, opts.Checks)}
	if e.active != nil {
		p, seed := e.active.InForce()
		vopts.Profile, vopts.Seed, vopts.Severity, vopts.Faults = p.Name, seed, severities(p, opts.Checks), len(p.Faults)
		vopts.Needs, vopts.Draws = p.Needs(), e.active
		if opts.LogFaults {
			e.active.OnSkip(e.logSkip)
		}
	}
	e.verifier = verify.New(vopts)
	var met observe.Observer
	if opts.Metrics {
		e.metrics = metrics.New(metrics.Options{Findings: func() []report.Check { return e.Report().Checks }})
		met = e.metrics
	}
	// The trace is judged again offline (fray check): it must hold the
	// observations in the order the verifier saw them. The queue passes
	// them on in one order, each of them, or each run of queued events,
	// to all of these in turn (observe.Tee).
	e.queue = observe.NewQueue(observe.Tee(e.verifier, opts.Trace, met, opts.Watch))
	popts := opts.proxyOptions()
	popts.Observer = e.queue
	if e.active != nil {
		popts.Faults = e.active
	}
	// Observations are timed from the proxy's start; taking ours first
	// keeps every report time at or after the last observation.
	e.start = e.clock.Now()
	p, err := forward.New(popts)
	if err != nil {
		return nil, err
	}
	e.proxy = p
	e.handler = e.flight.wrap(p)
	for _, c := range opts.Changes {
		e.schedule(c)
	}
	return e, nil
}

// Handler returns the engine's proxy as an http.Handler, for callers that
// serve it themselves (an httptest.Server). Serve uses the same handler.
func (e *Engine) Handler() http.Handler { return e.handler }

// Upstream returns the base URL the engine forwards to.
func (e *Engine) Upstream() string { return e.proxy.Upstream().String() }

// Elapsed is the time since the engine started, on its clock.
func (e *Engine) Elapsed() time.Duration { return e.clock.Now().Sub(e.start) }

// Live is what a progress line shows: the counts so far.
func (e *Engine) Live() report.Live {
	e.queue.Drain()
	p := e.verifier.Progress()
	return report.Live{Elapsed: e.Elapsed(), Exchanges: p.Exchanges, Events: p.Events, Faults: p.Faults, Findings: p.Findings}
}

// Report is the verdict so far: only what is past its deadline is judged.
// It may be called at any time, also while serving.
func (e *Engine) Report() report.Report {
	e.queue.Drain()
	r := e.verifier.Report(e.Elapsed())
	r.Partial = true
	return r
}

// Wait returns true once no exchange is open (the standalone GET streams
// counted only with standing), false if ctx ends first. fray run waits
// this way for the streams of a client that exited to end.
func (e *Engine) Wait(ctx context.Context, standing bool) bool { return e.flight.wait(ctx, standing) }

// shutdownBackstop is how long past the drain the HTTP server may take to
// stop once fray has ended every exchange itself.
const shutdownBackstop = 5 * time.Second

// Serve serves clients on ln until ctx ends (tlsConfig nil: plain HTTP),
// then shuts down: no new connections; the exchanges in flight get
// Options.Drain to finish (standalone GET streams are not waited for),
// less if hard ends first. Then fray stops observing (what follows is its
// own doing, not the peers') and ends what is still open cleanly. It
// returns when observation stopped and whether everything had drained.
// Serve may be called once.
func (e *Engine) Serve(ctx, hard context.Context, ln net.Listener, tlsConfig *tls.Config) Stopped {
	errc := make(chan error, 1)
	go func() { errc <- forward.Serve(ctx, ln, e.handler, tlsConfig, e.opts.Drain+shutdownBackstop) }()
	select {
	case err := <-errc:
		st := e.cut()
		st.Err = err
		return st
	case <-ctx.Done():
	}
	if e.onShutdown != nil {
		e.onShutdown()
	}
	dctx, cancel := context.WithTimeout(hard, e.opts.Drain)
	e.flight.wait(dctx, false)
	cancel()
	st := e.cut()
	st.Err = <-errc
	return st
}

// ServeWhile serves clients on ln while work runs, then gives the
// exchanges still open up to settle to end (the streams of a client that
// exited end with it, standalone streams included), and stops serving as
// Serve does. ctx ending stops it at once, as Serve's does. It is how fray
// run and fray demo wrap their clients.
func (e *Engine) ServeWhile(ctx, hard context.Context, ln net.Listener, settle time.Duration, work func()) Stopped {
	serveCtx, endServe := context.WithCancel(ctx)
	defer endServe()
	done := make(chan Stopped, 1)
	go func() { done <- e.Serve(serveCtx, hard, ln, nil) }()
	work()
	sctx, cancel := context.WithTimeout(hard, settle)
	e.Wait(sctx, true)
	cancel()
	endServe()
	return <-done
}

// Stop stops observation and ends every exchange still open, for callers
// that serve Handler themselves; Serve does it on its own.
func (e *Engine) Stop() Stopped { return e.cut() }

// cut stops observation, then ends every exchange still open.
func (e *Engine) cut() Stopped {
	e.stopped.Do(func() {
		for _, stop := range e.timers {
			stop()
		}
	})
	// Held streams end first, and are reported: their clients' sides
	// ended long ago.
	e.proxy.EndHolds()
	e.queue.Close()
	st := Stopped{At: e.Elapsed()}
	st.Open, st.Drained = e.flight.endAll()
	return st
}

// Finish makes the final report of a run that stopped as st says, with
// the command fray run wrapped (nil for none), and ends the trace with it.
// When exchanges were still open at the cut (fray's shutdown ended them,
// not the peers), what they still owed is not judged: the report is made
// as of the cut with the deadlines in force. Otherwise everything open is
// settled.
func (e *Engine) Finish(st Stopped, cmd *report.Command) (report.Report, error) {
	end := trace.End{At: st.At, Drained: st.Drained}
	if cmd != nil {
		end.Command, end.ExitCode, end.CommandError = cmd.Args, cmd.ExitCode, cmd.Error
	}
	r := Settle(e.verifier, end)
	var err error
	if t := e.opts.Trace; t != nil {
		if terr := t.Finish(end); terr != nil {
			err = fmt.Errorf("trace: %w", terr)
		}
	}
	return r, err
}

// Settle is the verdict of a run that ended as end says: everything still
// owed is judged when the run drained; when fray had to end exchanges
// itself, only what was past its deadline is, as a snapshot judges. The
// live run and the offline check both make their final report here.
//
// When the run wrapped a command (the client under test), the command's
// end is known: what the client still owed is judged at once, since it
// will not come, and a failed command fails the verdict.
func Settle(v *verify.Verifier, end trace.End) report.Report {
	if end.Command != nil {
		v.ClientExited(report.Command{Args: end.Command, ExitCode: end.ExitCode, Error: end.CommandError})
	}
	if !end.Drained {
		return v.Report(end.At)
	}
	return v.Final(end.At)
}

// Abort ends the trace of an engine that will not Finish (a run that
// failed before it served), so that no trace is left without its end line.
// A trace ends once: after Finish, Abort does nothing.
func (e *Engine) Abort() error {
	if t := e.opts.Trace; t != nil {
		return t.Finish(trace.End{})
	}
	return nil
}
