// Package report holds the verdict of a fray run and writes it out: the
// JSON report (its schema is in the README), JUnit XML and the human
// summary, and draws the live progress line. The verifier fills a Report;
// this package only formats, writes, reads and merges them.
package report

import "github.com/frayproxy/fray/checks"

// SchemaVersion is the version of the JSON report's schema. It grows when a
// field changes meaning or goes away; new fields do not change it.
const SchemaVersion = 1

// The verdicts of a run.
const (
	// VerdictPass: no check of error severity failed.
	VerdictPass = "pass"
	// VerdictFail: at least one check of error severity failed.
	VerdictFail = "fail"
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
	// Verdict is VerdictPass or VerdictFail.
	Verdict string `json:"verdict"`
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
	// report of a single run.
	Merged int `json:"merged,omitempty"`
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
	Args     []string `json:"args"`
	ExitCode int      `json:"exit_code"`
}
