package main

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
	"github.com/frayproxy/fray/proxy/trace"
	"github.com/frayproxy/fray/proxy/verify"
)

// engine is one fray under test: the proxy, the verifier watching it, and
// the means to stop it so that fray's own shutdown is never held against a
// peer.
//
//	client <-> inflight (tracks, can end every exchange) <-> proxy <-> upstream
//	                                                          |
//	                                             gate (cut at shutdown) -> verifier, watchers
type engine struct {
	proxy    *proxy.Proxy
	verifier *verify.Verifier
	gate     *gate
	flight   *inflight
	start    time.Time
	// onShutdown, when set, is called as shutdown begins, before the
	// drain; tests use it to act at that moment.
	onShutdown func()
}

// newEngine builds the proxy of opts with a verifier for the active
// profile (nil: none) watching it; watch, when not nil, sees the same
// observations.
func newEngine(opts proxy.Options, active *profiles.Active, watch observe.Observer) (*engine, error) {
	vopts := verify.Options{}
	if active != nil {
		vopts = verifyOptions(active.Profile(), active.Seed())
	}
	e := &engine{verifier: verify.New(vopts), flight: newInflight()}
	e.gate = &gate{next: observe.Tee(e.verifier, watch, opts.Observer)}
	opts.Observer = e.gate
	// Observations are timed from the proxy's start; taking ours first
	// keeps every report time at or after the last observation.
	e.start = time.Now()
	p, err := proxy.New(opts)
	if err != nil {
		return nil, err
	}
	e.proxy = p
	return e, nil
}

// elapsed is the time since the proxy started.
func (e *engine) elapsed() time.Duration { return time.Since(e.start) }

// live is what the progress line shows.
func (e *engine) live() report.Live {
	p := e.verifier.Progress()
	return report.Live{Elapsed: e.elapsed(), Exchanges: p.Exchanges, Events: p.Events, Faults: p.Faults, Findings: p.Findings}
}

// snapshot is the report so far, as of at, for a soak run's report file:
// only what is past its deadline is judged.
func (e *engine) snapshot(at time.Duration) report.Report {
	r := e.verifier.Report(at)
	r.Partial = true
	return r
}

// final is the report of the run that stopped as st says. When exchanges
// were still open at the cut (fray's shutdown ended them, not the peers),
// what they still owed is not judged: the report is made as of the cut
// with the deadlines in force, as a snapshot is. Otherwise everything
// open is settled.
func (e *engine) final(st stopped) report.Report {
	return settle(e.verifier, trace.End{At: st.at, Drained: st.drained})
}

// stopped is how serve ended.
type stopped struct {
	// at is when observation stopped: what the report is made as of.
	at time.Duration
	// drained: no exchange but standalone GET streams was open then.
	drained bool
	// open is how many exchanges fray ended itself.
	open int
	err  error
}

// shutdownBackstop is how long past the drain the HTTP server may take to
// stop once fray has ended every exchange itself.
const shutdownBackstop = 5 * time.Second

// serve serves clients on ln until ctx ends, then shuts down: no new
// connections; the exchanges in flight get up to drain to finish (the
// standalone GET streams, which never finish by themselves, are not waited
// for), less if hard ends first. Then fray stops observing — what follows
// is its own doing, not the peers' — ends what is still open cleanly, and
// waits for the server to stop. It returns when observation stopped (the
// time the report is made as of), whether everything had drained, and the
// server's error.
func (e *engine) serve(ctx, hard context.Context, ln net.Listener, tlsConfig *tls.Config, drain time.Duration) stopped {
	errc := make(chan error, 1)
	go func() { errc <- proxy.Serve(ctx, ln, e.flight.wrap(e.proxy), tlsConfig, drain+shutdownBackstop) }()
	select {
	case err := <-errc:
		st := e.cut()
		st.err = err
		return st
	case <-ctx.Done():
	}
	if e.onShutdown != nil {
		e.onShutdown()
	}
	dctx, cancel := context.WithTimeout(hard, drain)
	e.flight.wait(dctx, false)
	cancel()
	st := e.cut()
	st.err = <-errc
	return st
}

// cut stops observation, then ends every exchange still open.
func (e *engine) cut() stopped {
	e.gate.close()
	st := stopped{at: e.elapsed()}
	st.open, st.drained = e.flight.endAll()
	return st
}

// gate passes observations on until it is closed. It is safe for
// concurrent use.
type gate struct {
	next   observe.Observer
	mu     sync.RWMutex
	closed bool
}

func (g *gate) Observe(o *observe.Observation) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if !g.closed && g.next != nil {
		g.next.Observe(o)
	}
}

// close stops the flow; once it returns, no observation is being passed on.
func (g *gate) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

// inflight tracks the exchanges being served, so that shutdown can wait
// for them and then end those left. It is safe for concurrent use.
type inflight struct {
	mu       sync.Mutex
	next     uint64
	open     map[uint64]flight
	changed  chan struct{} // closed and replaced whenever an exchange ends
	ending   bool          // endAll was called: new exchanges end at once
	standing int           // open standalone GET streams
}

type flight struct {
	cancel   context.CancelFunc
	standing bool
}

func newInflight() *inflight {
	return &inflight{open: map[uint64]flight{}, changed: make(chan struct{})}
}

// wrap serves h with every request's context in f's hands.
func (f *inflight) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		// A GET without Last-Event-ID opens a standalone stream that lasts as
		// long as the session: nothing to wait for at shutdown.
		standing := r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") == ""
		id := f.add(flight{cancel, standing})
		defer f.remove(id)
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

func (f *inflight) add(fl flight) uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ending {
		fl.cancel()
	}
	f.next++
	f.open[f.next] = fl
	if fl.standing {
		f.standing++
	}
	return f.next
}

func (f *inflight) remove(id uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.open[id].standing {
		f.standing--
	}
	delete(f.open, id)
	close(f.changed)
	f.changed = make(chan struct{})
}

// wait returns true once no exchange is open (standing streams included
// only with standing), false if ctx ends first.
func (f *inflight) wait(ctx context.Context, standing bool) bool {
	for {
		f.mu.Lock()
		n := len(f.open)
		if !standing {
			n -= f.standing
		}
		ch := f.changed
		f.mu.Unlock()
		if n == 0 {
			return true
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}

// endAll ends every open exchange, and every later one at once: the
// proxy sees its client gone and ends the response cleanly. It returns how
// many were open, and whether they were all standalone GET streams.
func (f *inflight) endAll() (open int, drained bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ending = true
	for _, fl := range f.open {
		fl.cancel()
	}
	return len(f.open), len(f.open) == f.standing
}
