// Package verify decides, from the proxy's observations, whether both ends
// of an MCP connection recovered from what happened to it: a ledger of
// sessions, streams and events, and the checks that read it.
//
//	observe.Observation --Observe--> ledger --Report/Final--> report.Report
//
// The ledger follows each session (by id; reports name it by number only)
// and each logical stream: a POST's answer stream with its chain of
// resumptions, the standalone GET stream, a legacy stream. It keeps two
// views of each stream, the server's (what the upstream sent, and the
// Last-Event-ID fray forwarded) and the client's (what fray delivered, and
// the Last-Event-ID the client sent), so that a check of one end never
// reads what fray did to the other. Time is only Observation.At: a
// Verifier run on a trace reaches the same verdict as the live one.
//
// Memory stays bounded on runs of any length: ids are kept in windows of
// idWindow per session, a logical stream that owes nothing more is folded
// into counters, and sessions are settled and dropped once idle past
// Options.AnswerDeadline, or deleted.
package verify

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
)

// Options configures a Verifier. The zero value checks with the default
// severities and deadlines.
type Options struct {
	// Severity overrides a check's default severity: check id to
	// checks.Error, checks.Warning or checks.Off.
	// Ids not in the catalog and other values are ignored (profiles
	// rejects them before they get here).
	Severity map[string]checks.Severity
	// AnswerDeadline is how long after the last activity of its session a
	// forwarded request may stay unanswered (e2e.every-request-answered);
	// 0 means 30s. It is also how long, beyond the retry it was given, a
	// client has to reconnect or to start a new session after a 404
	// before Report holds it against it.
	AnswerDeadline time.Duration
	// Profile and Seed are copied into the report. Faults is how many
	// faults the profile has: with any, a run where none fired is
	// inconclusive.
	Profile string
	Seed    uint64
	Faults  int
	// Needs are the recoveries the profile exists to exercise
	// (profiles.Profile.Needs): a run that would pass without one of them
	// is inconclusive. Nil asks only that a fault fired.
	Needs []faults.Need
	// Draws, when set, tells why a fault never acted (its draws and a
	// seed that fires it); nil offline, where the draws are not known.
	Draws Draws
}

// Draws is what the verifier asks of the faults in force about their
// random draws; faults.Set and profiles.Active provide it.
type Draws interface {
	Stats() []faults.FaultStats
	FiringSeed(index int) (seed uint64, fired, skipped int, ok bool)
}

// DefaultAnswerDeadline is the AnswerDeadline of the zero Options.
const DefaultAnswerDeadline = 30 * time.Second

// finalGrace is how long after the wait it was owed a client has, when
// Final closes a run, to have reconnected or started a new session.
const finalGrace = time.Second

// dueAt is when what a peer owes since since falls due: the answer
// deadline after it, or, when Final closes the run, finalGrace after it.
func (v *Verifier) dueAt(since time.Duration, final bool) time.Duration {
	if final {
		return since + finalGrace
	}
	return since + v.deadline
}

// Progress counts what a Verifier has seen so far, for a live progress
// line: exchanges begun, SSE events, fault firings (each once) and
// findings of checks that are not off. The zero value counts nothing yet.
type Progress struct {
	Exchanges, Events, Faults, Findings int
}

// Verifier is an observe.Observer that keeps a bounded ledger and applies
// the checks. It is safe for concurrent use; observations of one exchange
// must arrive in order, as the proxy makes them. It reads no clock: every
// time it knows is an Observation's At, or the at given to Report and
// Final. The zero value is not usable; call New.
type Verifier struct {
	opts     Options
	deadline time.Duration

	mu        sync.Mutex
	prog      Progress
	totals    report.Totals
	last      time.Duration
	lastSweep time.Duration
	checks    [numChecks]checkState
	faults    map[string]int

	sessions map[string]*session
	meta     *window[uint64, *sessionMeta] // by hashKey
	exch     map[uint64]*exch
	reinit   []reinitDue
	legacy   []*logical
	dead     []*session
	changes  []report.ProfileChange

	// What the run saw, for a verdict that is earned: answers from the
	// upstream and from fray itself, JSON-RPC requests forwarded, and
	// whether any profile in force had faults.
	fromUpstream int
	fromFray     int
	forwarded    int
	expectFaults bool
	// mcpAnswers counts the upstream's answers that showed an MCP
	// endpoint; offEndpoint is the first that did not (upstreamAnswered).
	mcpAnswers  int
	offEndpoint string
	// clientExited: the client under test has exited (fray run), so
	// nothing it still owed will come.
	clientExited bool
	command      *report.Command
	// stateless is the ledger of the 2026-07-28 checks, nil until a
	// request of that revision comes.
	stateless *stateless
	// cov counts the recoveries exercised; needs are those the profile
	// exists for, firedBy counts the firings of each fault by index, and
	// armedBy the streams each armed fault (faults.Armed) was armed on.
	cov     report.Coverage
	needs   []faults.Need
	firedBy map[int]int
	armedBy map[int]int
}

// reinitDue is a session answered 404 whose client owes an initialize.
type reinitDue struct {
	seq   int
	at    time.Duration
	ex    uint64
	fault *report.FaultRef
}

// New returns a Verifier.
func New(opts Options) *Verifier {
	v := &Verifier{
		opts:         opts,
		deadline:     opts.AnswerDeadline,
		faults:       make(map[string]int),
		sessions:     make(map[string]*session),
		meta:         newWindow[uint64, *sessionMeta](maxSessionMeta),
		exch:         make(map[uint64]*exch),
		firedBy:      make(map[int]int),
		armedBy:      make(map[int]int),
		needs:        opts.Needs,
		expectFaults: opts.Faults > 0,
	}
	if v.deadline <= 0 {
		v.deadline = DefaultAnswerDeadline
	}
	v.setSeverities()
	return v
}

// Observe records one observation. It copies what it keeps: o may be
// reused once it returns.
func (v *Verifier) Observe(o *observe.Observation) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.observe(o)
}

// ObserveRun records a run of observations, in order, under one lock
// (observe.RunObserver). It copies what it keeps.
func (v *Verifier) ObserveRun(run []observe.Observation) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for i := range run {
		v.observe(&run[i])
	}
}

// observe records o; v.mu is held.
func (v *Verifier) observe(o *observe.Observation) {
	o = bounded(o)
	v.last = max(v.last, o.At)
	v.countFaults(o)
	switch o.Kind {
	case observe.KindRequest:
		v.prog.Exchanges++
		v.totals.Exchanges++
		if o.Request != nil {
			v.onRequest(o)
		}
	case observe.KindResponse:
		if o.Response != nil {
			v.onResponse(o)
		}
	case observe.KindEvent:
		v.prog.Events++
		v.totals.Events++
		if o.Event != nil {
			v.onEvent(o)
		}
	case observe.KindEnd:
		if o.End != nil {
			v.onEnd(o)
		}
	case observe.KindProfile:
		if o.Profile != nil {
			v.onProfile(o)
		}
	}
	if v.last-v.lastSweep >= sweepEvery {
		v.lastSweep = v.last
		v.sweep(v.last, false)
	}
}

// countFaults counts the firings an observation reports. A fault that
// answered a request is reported on the request and again on the answer;
// it is counted once.
func (v *Verifier) countFaults(o *observe.Observation) {
	if len(o.Fired) == 0 && o.Kind != observe.KindEnd || o.Kind == observe.KindResponse && o.Response != nil && o.Response.Origin != observe.FromUpstream {
		return
	}
	for _, f := range v.acted(o) {
		v.faults[f.Kind]++
		v.firedBy[f.Index]++
		v.prog.Faults++
		v.totals.Faults++
	}
}

// Progress returns the counts so far. It is cheap: a copy under the lock.
func (v *Verifier) Progress() Progress {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.prog
}

// Report settles what is past its deadline as of at (the time since the
// proxy started) and returns the verdict. It may be called more than once
// (for report snapshots); each call reflects everything observed so far,
// and what it settled stays settled.
func (v *Verifier) Report(at time.Duration) report.Report {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.sweep(max(at, v.last), false)
	return v.build(at)
}

// ClientExited tells the verifier that the client under test, the
// command fray run wrapped, has ended as cmd says: whatever it still owed
// (a reconnection, a new session) will not come, so Final judges it at
// once instead of excusing it as the run ending during a wait; and the
// report carries the command, whose failure fails the verdict.
func (v *Verifier) ClientExited(cmd report.Command) {
	v.mu.Lock()
	v.clientExited = true
	cmd.Args = slices.Clone(cmd.Args)
	v.command = &cmd
	v.mu.Unlock()
}

// Final settles everything still open as of at, as when the run is over:
// every outstanding request is judged, and a client that still owed a
// reconnection or a new session is judged once the wait it was given plus
// a second has passed (reconnections and new sessions owed more recently
// are excused: the run ended during the wait). It returns the final
// report. Observations after Final start a fresh ledger for what they
// show.
func (v *Verifier) Final(at time.Duration) report.Report {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.sweep(max(at, v.last), true)
	return v.build(at)
}

// build assembles the report.
func (v *Verifier) build(at time.Duration) report.Report {
	r := report.Report{
		Schema:     report.SchemaVersion,
		Profile:    v.opts.Profile,
		Seed:       v.opts.Seed,
		Changes:    slices.Clone(v.changes),
		Command:    v.command,
		DurationMS: at.Milliseconds(),
		Totals:     v.totals,
		Checks:     make([]report.Check, 0, numChecks),
	}
	for i := range v.checks {
		cs := &v.checks[i]
		c := report.Check{
			ID:       catalog[i].ID,
			Severity: cs.sev,
			Status:   cs.status(),
			Count:    cs.count,
			Applied:  cs.applied,
			Summary:  catalog[i].Summary,
			Evidence: append([]report.Evidence{}, cs.evidence...),
			Excused:  cs.excuses(),
		}
		if cs.sev == checks.Off {
			c.Count, c.Applied, c.Evidence, c.Excused = 0, 0, []report.Evidence{}, nil
		}
		r.Totals.Findings += c.Count
		r.Checks = append(r.Checks, c)
	}
	for _, k := range faults.Kinds() {
		if n := v.faults[k.Name]; n > 0 {
			r.Faults = append(r.Faults, report.FaultCount{Kind: k.Name, Count: n})
		}
	}
	r.Coverage = v.coverage()
	r.Conclude(v.short(r.Coverage))
	if ne := v.noEndpoint(); ne != "" && r.Verdict == report.VerdictFail && !r.Command.Failed() {
		// The checks judged traffic that was not MCP's: what they found
		// says nothing of the peers.
		r.Verdict, r.Why, r.Shortfall = report.VerdictInconclusive, ne+" (the checks judged what was not MCP traffic: "+r.Why+")", ""
	}
	return r
}

// short says what fray did not see that a pass needs, "" when it saw
// enough: some traffic, some of it answered by the upstream, an answer
// that shows an MCP endpoint, some JSON-RPC request forwarded, and, under
// a profile with faults, the recovery the profile exists for.
func (v *Verifier) short(c *report.Coverage) string {
	switch {
	case v.totals.Exchanges == 0:
		return "no exchange went through fray: is the client pointed at fray's address?"
	case v.fromUpstream == 0:
		return fmt.Sprintf("no exchange reached the upstream: fray answered all %d itself (faults, or the upstream could not be reached)", v.fromFray)
	case v.noEndpoint() != "":
		return v.noEndpoint()
	case v.forwarded == 0:
		return "no JSON-RPC request was forwarded to the upstream: nothing was asked of the server"
	case len(c.Missing) > 0 && v.totals.Faults == 0:
		return "no fault fired: " + strings.Join(c.Missing, "; ")
	case len(c.Missing) > 0:
		return "the recovery the profile exists for never happened: " + strings.Join(c.Missing, "; ")
	case v.expectFaults && v.totals.Faults == 0:
		return "no fault fired: nothing the profile selects happened"
	}
	return ""
}

// onProfile records a change of the profile in force: the report names
// the profile in force at the end and lists every change, and a swapped
// profile's [checks] severities hold for what is judged from then on
// (checks it leaves out go back to their defaults).
func (v *Verifier) onProfile(o *observe.Observation) {
	p := o.Profile
	c := report.ProfileChange{AtMS: o.At.Milliseconds(), Action: p.Action, Profile: p.Name, Seed: p.Seed}
	if p.Action == observe.ProfileSwap {
		// What the swapped-in profile exists for is not known here: a
		// swapped run needs only that a fault fired.
		v.needs = nil
		v.opts.Severity = p.Checks
		v.setSeverities()
	} else {
		f := p.Fault
		c.Fault = &f
	}
	v.changes = append(v.changes, c)
	v.opts.Profile, v.opts.Seed = p.Name, p.Seed
	v.expectFaults = v.expectFaults || p.Faults > 0
}

// setSeverities puts the severities of v.opts in force.
func (v *Verifier) setSeverities() {
	for i, c := range catalog {
		v.checks[i].sev = c.Severity
		switch s := v.opts.Severity[c.ID]; s {
		case checks.Error, checks.Warning, checks.Off:
			v.checks[i].sev = s
		}
	}
}

// hashKey hashes a session id for the bounded set of session metadata.
func hashKey(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}
