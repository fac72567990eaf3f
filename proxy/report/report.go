// Package report holds the verdict of a fray run and writes it out: the
// JSON report (its schema is in docs/reports.md), JUnit XML and the human
// summary, and draws the live progress line. The verifier fills a Report;
// this package only formats, writes, reads and merges them.
package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/frayproxy/fray/proxy/checks"
)

// SchemaVersion is the version of the JSON report's schema. It grows when a
// field changes meaning or goes away; new fields do not change it.
const SchemaVersion = 1

// The verdicts of a run.
const (
	// VerdictPass: fray saw enough traffic, the recoveries the profile
	// exists for happened (a fault fired, when it exists for none), no
	// check of error severity failed, and the wrapped command (if any)
	// exited 0.
	VerdictPass = "pass"
	// VerdictFail: a check of error severity failed, or the wrapped
	// command failed.
	VerdictFail = "fail"
	// VerdictInconclusive: nothing failed, but fray saw too little to say
	// that both ends recover: no exchange went through it, none reached the
	// upstream, no JSON-RPC request was forwarded, a recovery the profile
	// exists for never happened, or the profile has faults and none
	// fired. Why says which.
	VerdictInconclusive = "inconclusive"
	// VerdictInterrupted: a signal stopped the run before it ended by
	// itself; the report holds what was seen up to then, and Why what the
	// verdict would have been.
	VerdictInterrupted = "interrupted"
)

// The statuses of a check.
const (
	StatusPass = "pass" // applied, and nothing was found
	StatusFail = "fail" // a finding, and the check's severity is error
	StatusWarn = "warn" // a finding, and the check's severity is warning
	StatusSkip = "skip" // never applied (nothing it looks at happened, or the protocol revision exempts it), or off
)

// Report is the outcome of a run, live or offline. The zero value is an
// empty report with no verdict.
type Report struct {
	// Schema is SchemaVersion.
	Schema int `json:"schema"`
	// Verdict is VerdictPass, VerdictFail, VerdictInconclusive or
	// VerdictInterrupted.
	Verdict string `json:"verdict"`
	// Why says in one line why the verdict is not a plain pass: the
	// checks that failed, the command that failed, or what fray did not
	// see. "" for a pass.
	Why string `json:"why,omitempty"`
	// Accepted is set when the user accepted an inconclusive run as a
	// pass (fray run --allow-inconclusive): the verdict stays, the exit
	// code is 0. With a baseline, it is the baselined verdict that was
	// inconclusive.
	Accepted bool `json:"inconclusive_accepted,omitempty"`
	// Profile and Seed name the fault profile in force ("" when none).
	Profile string `json:"profile,omitempty"`
	Seed    uint64 `json:"seed"`
	// DurationMS is how long the run observed traffic, in milliseconds.
	DurationMS int64 `json:"duration_ms"`
	// Totals counts what was observed.
	Totals Totals `json:"totals"`
	// Checks lists every check in catalog order, applied or not.
	Checks []Check `json:"checks"`
	// Faults counts firings per fault kind, in registry order; kinds that
	// never fired are left out.
	Faults []FaultCount `json:"faults"`
	// Coverage counts the recoveries the run exercised; nil in a report
	// made before fray counted them.
	Coverage *Coverage `json:"coverage,omitempty"`
	// Changes lists the changes of the profile in force made while the
	// run went on (swaps, faults switched on or off), in order; Profile and
	// Seed are then those in force at the end. Nil when there were none.
	Changes []ProfileChange `json:"profile_changes,omitempty"`
	// Command is the result of the command `fray run` wrapped, nil
	// otherwise.
	Command *Command `json:"command,omitempty"`
	// Partial is true in a snapshot written while the run goes on (soak
	// mode's --report-every); the report written at the end has it false.
	Partial bool `json:"partial,omitempty"`
	// Merged is how many reports Merge combined into this one; 0 for the
	// report of a single run. Shards then lists each one's profile, seed,
	// verdict and command, in the order given to Merge.
	Merged int     `json:"merged,omitempty"`
	Shards []Shard `json:"shards,omitempty"`
	// Shortfall says what fray did not see that a pass needs, when the
	// verdict is fail for another reason (an inconclusive verdict says it
	// in Why): a baseline that sets every failure aside leaves such a run
	// inconclusive, never a pass. "" when fray saw enough.
	Shortfall string `json:"shortfall,omitempty"`
	// Baseline is the verdict judged against an expected-failures
	// baseline; nil when none was given. The exit code follows it.
	Baseline *Baselined `json:"baseline,omitempty"`
}

// Shard is one report of a merge, as Merge kept it.
type Shard struct {
	Profile string   `json:"profile,omitempty"`
	Seed    uint64   `json:"seed"`
	Verdict string   `json:"verdict"`
	Why     string   `json:"why,omitempty"`
	Command *Command `json:"command,omitempty"`
	// Shortfall is what fray did not see in that run (Report.ShortOf).
	Shortfall string `json:"shortfall,omitempty"`
	// Statuses is the status of each check that applied in that run
	// (pass, fail or warn), by id, so that an expected-failures baseline
	// can judge each run under its own profile; nil in reports merged by
	// a fray that did not keep them.
	Statuses map[string]string `json:"statuses,omitempty"`
}

// Totals counts what a run observed.
type Totals struct {
	Sessions    int `json:"sessions"`
	Exchanges   int `json:"exchanges"`
	Streams     int `json:"streams"`
	Events      int `json:"events"`
	Resumptions int `json:"resumptions"`
	Faults      int `json:"faults"`
	Findings    int `json:"findings"`
}

// Check is one check's outcome.
type Check struct {
	// ID is the check's fixed id, e.g. "client.retry-honoured".
	ID string `json:"id"`
	// Severity is the severity in force (the profile may override the
	// default).
	Severity checks.Severity `json:"severity"`
	// Status is StatusPass, StatusFail, StatusWarn or StatusSkip.
	Status string `json:"status"`
	// Count is the number of findings; Applied the number of times the
	// check had something to judge.
	Count   int `json:"count"`
	Applied int `json:"applied"`
	// Summary says in one sentence what the check requires.
	Summary string `json:"summary"`
	// Evidence holds the first findings (at most MaxEvidence), oldest first.
	Evidence []Evidence `json:"evidence"`
	// Excused counts, by reason, the cases the check did not hold against
	// either end (a fault fray injected, a case it cannot judge), sorted
	// by reason; nil when there were none.
	Excused []Excuse `json:"excused,omitempty"`
}

// Excuse is how many cases a check excused for one reason.
type Excuse struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

// MaxEvidence bounds the evidence kept per check, so a long run's report
// stays small; Count still counts every finding.
const MaxEvidence = 10

// Evidence is what backs one finding.
type Evidence struct {
	// Message says what was wrong, in one sentence.
	Message string `json:"message"`
	// Session is the session's number in order of appearance (ids are not
	// written: they can be credentials).
	Session int `json:"session,omitempty"`
	// Exchange is the exchange (stream) the finding is about; Related the
	// other exchanges it involves (the stream resumed, the reconnection).
	Exchange uint64   `json:"exchange,omitempty"`
	Related  []uint64 `json:"related,omitempty"`
	// EventIDs are the SSE event ids involved.
	EventIDs []string `json:"event_ids,omitempty"`
	// AtMS is when the finding was made, in milliseconds since the start.
	AtMS int64 `json:"at_ms"`
	// Fault is the fault that set the situation up, when one did.
	Fault *FaultRef `json:"fault,omitempty"`
	// Inferred marks a finding fray did not see on the wire but inferred
	// (from ids that count: events the server produced while no client
	// was connected).
	Inferred bool `json:"inferred,omitempty"`
	// Instance is, in a merged report, which of the merged reports (from
	// 1, in the order given to Merge) the finding comes from: sessions,
	// exchanges and times are that instance's own. 0 outside merges.
	Instance int `json:"instance,omitempty"`
}

// FaultRef names a fault of the profile.
type FaultRef struct {
	Index int    `json:"index"`
	Kind  string `json:"kind"`
}

// FaultCount is how often faults of one kind fired.
type FaultCount struct {
	Kind  string `json:"kind"`
	Count int    `json:"count"`
}

// ProfileChange is one change of the profile in force during a run.
type ProfileChange struct {
	// AtMS is when it was made, in milliseconds since the start.
	AtMS int64 `json:"at_ms"`
	// Action is "swap", "enable" or "disable".
	Action string `json:"action"`
	// Profile and Seed are the profile in force after the change.
	Profile string `json:"profile"`
	Seed    uint64 `json:"seed"`
	// Fault is the index of the fault switched, for enable and disable.
	Fault *int `json:"fault,omitempty"`
}

// Command is the outcome of the command under `fray run`.
type Command struct {
	Args []string `json:"args"`
	// ExitCode is the command's exit code; -1 when it could not start or
	// was killed by a signal.
	ExitCode int `json:"exit_code"`
	// Error says why a command that did not exit 0 failed: it could not
	// start, it was interrupted, its exit status. "" when it exited 0.
	Error string `json:"error,omitempty"`
}

// Failed reports whether c ran and did not exit 0; false for nil.
func (c *Command) Failed() bool { return c != nil && (c.ExitCode != 0 || c.Error != "") }

// Conclude sets r's verdict and Why from its checks, its command and what
// the run saw: fail when a check failed at error severity or the command
// failed; otherwise inconclusive when short (what fray did not see, ""
// when it saw enough); otherwise pass. A failed run that was also short
// keeps short in Shortfall.
func (r *Report) Conclude(short string) {
	var why []string
	if failed := failedChecks(r.Checks); len(failed) > 0 {
		why = append(why, "failed: "+strings.Join(failed, ", "))
	}
	if r.Command.Failed() {
		why = append(why, r.commandFailure())
	}
	switch {
	case len(why) > 0:
		r.Verdict, r.Why, r.Shortfall = VerdictFail, strings.Join(why, "; "), short
	case short != "":
		r.Verdict, r.Why, r.Shortfall = VerdictInconclusive, short, ""
	default:
		r.Verdict, r.Why, r.Shortfall = VerdictPass, "", ""
	}
}

// Interrupt marks r as stopped by a signal: the verdict (and the
// baselined one) becomes VerdictInterrupted, and Why says what it would
// have been. Call it after Conclude and ApplyBaseline.
func (r *Report) Interrupt() {
	r.Verdict, r.Why = VerdictInterrupted, interruptedWhy(r.Verdict, r.Why)
	if b := r.Baseline; b != nil {
		b.Verdict, b.Why = VerdictInterrupted, interruptedWhy(b.Verdict, b.Why)
	}
}

// interruptedWhy says that a signal stopped the run, and what the verdict
// was up to then.
func interruptedWhy(verdict, why string) string {
	s := "a signal stopped the run; up to then the verdict was " + verdict
	if why != "" {
		s += ": " + why
	}
	return s
}

// ChecksFailed reports whether a check failed at error severity, as
// opposed to a verdict that failed on the command alone.
func (r *Report) ChecksFailed() bool {
	return slices.ContainsFunc(r.Checks, func(c Check) bool { return c.Status == StatusFail })
}

// failedChecks names the checks that failed at error severity, each with
// its count of findings: "client.retry-honoured (3)".
func failedChecks(cs []Check) []string {
	var failed []string
	for _, c := range cs {
		if c.Status == StatusFail {
			failed = append(failed, fmt.Sprintf("%s (%d)", c.ID, c.Count))
		}
	}
	return failed
}

// describe says how a command ended, in a few words.
func (c *Command) describe() string {
	if c.Error != "" {
		return c.Error
	}
	return fmt.Sprintf("exit code %d", c.ExitCode)
}
