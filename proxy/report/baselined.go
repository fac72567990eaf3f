package report

import (
	"fmt"
	"strings"
)

// Baselined is a verdict judged against an expected-failures baseline:
// the checks the baseline lists are set aside when they fail or warn, and
// a listed check that passed makes the build fail until the entry goes.
// The run's own Verdict and the checks' statuses are left as they were.
type Baselined struct {
	// File is the baseline file, as given.
	File string `json:"file"`
	// Verdict is the verdict once the listed failures are set aside:
	// pass, fail (a failure the baseline does not list, a listed check
	// that passed, or the client command failed) or inconclusive (fray
	// saw too little; a baseline never makes that a pass).
	Verdict string `json:"verdict"`
	// Why says why Verdict is not a plain pass; "" for a pass.
	Why string `json:"why,omitempty"`
	// Expected lists the listed checks that failed or warned, as the
	// baseline expects.
	Expected []BaselineEntry `json:"expected"`
	// Fixed lists the listed checks that passed: their entries are to be
	// removed from the baseline, and the build fails until they are.
	Fixed []BaselineEntry `json:"fixed"`
	// Unexpected lists the checks that failed at error severity and that
	// the baseline does not list.
	Unexpected []string `json:"unexpected"`
	// Unexercised lists the listed checks that did not apply in this run
	// (nothing they look at happened, or switched off): no sign either
	// way, so they are left alone.
	Unexercised []BaselineEntry `json:"unexercised"`
}

// BaselineEntry is one entry of a baseline file.
type BaselineEntry struct {
	// Check is the check id the entry names.
	Check string `json:"check"`
	// Profile, when not "", is the profile the entry is limited to.
	Profile string `json:"profile,omitempty"`
	// Line is the entry's line in the file, from 1.
	Line int `json:"line"`
	// Reason is the comment written after the entry, "" when none.
	Reason string `json:"reason,omitempty"`
}

// Entry is e as the file writes it: CHECK-ID, or PROFILE:CHECK-ID.
func (e BaselineEntry) Entry() string {
	if e.Profile == "" {
		return e.Check
	}
	return e.Profile + ":" + e.Check
}

// String renders e as it is cited: the entry, the line, and the reason.
func (e BaselineEntry) String() string {
	s := fmt.Sprintf("%s (line %d", e.Entry(), e.Line)
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s + ")"
}

// cite is entries as String renders each, joined by ", ".
func cite(entries []BaselineEntry) string {
	cited := make([]string, len(entries))
	for i, e := range entries {
		cited[i] = e.String()
	}
	return strings.Join(cited, ", ")
}

// Find returns the entry that set check id aside or found it fixed, and
// how: "expected", "fixed" or "unexercised"; "" when b lists none, or b
// is nil.
func (b *Baselined) Find(id string) (BaselineEntry, string) {
	if b == nil {
		return BaselineEntry{}, ""
	}
	for _, l := range []struct {
		state   string
		entries []BaselineEntry
	}{{"expected", b.Expected}, {"fixed", b.Fixed}, {"unexercised", b.Unexercised}} {
		for _, e := range l.entries {
			if e.Check == id {
				return e, l.state
			}
		}
	}
	return BaselineEntry{}, ""
}

// Outcome is the verdict the exit code follows, and why: the baselined
// verdict when a baseline was given, the run's own otherwise. checksFailed
// tells a failure of the checks (or of the baseline) from one of the
// client command alone.
func (r Report) Outcome() (verdict, why string, checksFailed bool) {
	if b := r.Baseline; b != nil {
		return b.Verdict, b.Why, len(b.Unexpected) > 0 || len(b.Fixed) > 0
	}
	return r.Verdict, r.Why, r.ChecksFailed()
}

// ShortOf says what fray did not see that a pass needs, whatever the
// verdict: Why of an inconclusive verdict, Shortfall of a failed one; ""
// when it saw enough.
func (r Report) ShortOf() string {
	if r.Verdict == VerdictInconclusive {
		return r.Why
	}
	return r.Shortfall
}

// ApplyBaseline judges r against the entries of the baseline file named
// file and sets r.Baseline. Each run is judged on its own: the report
// itself, or each report a merge combined (Shard.Statuses), so that an
// entry limited to a profile covers only the runs under that profile. In
// a run, a listed check that failed or warned is expected; one that passed
// is fixed, and fails the build until its entry goes (as the conformance
// suite fails on a stale entry); one that did not apply says nothing. An
// entry expected in one run and fixed in another is expected: the check
// still fails somewhere. The verdict is then fail when a check failed at
// error severity in a run that does not list it, an entry was fixed, or a
// client command failed; inconclusive when fray saw too little (whatever
// the baseline lists); pass otherwise. Call it after Conclude.
func (r *Report) ApplyBaseline(file string, entries []BaselineEntry) {
	b := &Baselined{File: file, Expected: []BaselineEntry{}, Fixed: []BaselineEntry{},
		Unexpected: []string{}, Unexercised: []BaselineEntry{}}
	state := map[int]string{} // entry index -> its state over every run
	unexpected := map[string]bool{}
	for _, u := range r.baselineRuns() {
		for _, c := range r.Checks {
			i := matchEntry(entries, c.ID, u.profile)
			st := u.status(c)
			switch {
			case i >= 0 && (st == StatusFail || st == StatusWarn):
				state[i] = "expected"
			case i >= 0 && st == StatusPass && state[i] != "expected":
				state[i] = "fixed"
			case i >= 0 && state[i] == "":
				state[i] = "unexercised"
			case i < 0 && st == StatusFail:
				unexpected[c.ID] = true
			}
		}
	}
	for i, e := range entries {
		switch state[i] {
		case "expected":
			b.Expected = append(b.Expected, e)
		case "fixed":
			b.Fixed = append(b.Fixed, e)
		case "unexercised":
			b.Unexercised = append(b.Unexercised, e)
		}
	}
	var failed []string
	for _, c := range r.Checks {
		if unexpected[c.ID] {
			b.Unexpected = append(b.Unexpected, c.ID)
			failed = append(failed, fmt.Sprintf("%s (%d%s)", c.ID, c.Count, listedElsewhere(entries, c.ID)))
		}
	}
	b.Verdict, b.Why = baselinedVerdict(r, file, failed, b.Fixed)
	r.Baseline = b
}

// baselinedVerdict is the verdict once the listed failures are set aside,
// and why it is not a pass.
func baselinedVerdict(r *Report, file string, failed []string, fixed []BaselineEntry) (verdict, why string) {
	var reasons []string
	if len(failed) > 0 {
		reasons = append(reasons, "failed, not in the baseline: "+strings.Join(failed, ", "))
	}
	if len(fixed) > 0 {
		names := make([]string, len(fixed))
		for i, e := range fixed {
			names[i] = fmt.Sprintf("%s (line %d)", e.Entry(), e.Line)
		}
		reasons = append(reasons, fmt.Sprintf("fixed, remove from %s: %s", file, strings.Join(names, ", ")))
	}
	if r.Command.Failed() {
		reasons = append(reasons, "the client command failed: "+r.Command.describe())
	}
	for i, s := range r.Shards {
		if s.Command.Failed() {
			reasons = append(reasons, fmt.Sprintf("the client command of report %d failed: %s", i+1, s.Command.describe()))
		}
	}
	switch short := r.ShortOf(); {
	case len(reasons) > 0:
		return VerdictFail, strings.Join(reasons, "; ")
	case short != "":
		return VerdictInconclusive, short
	}
	return VerdictPass, ""
}

// listedElsewhere says which profiles' entries list check id, for a
// failure no entry covered: a misspelt profile is then plain to see.
func listedElsewhere(entries []BaselineEntry, id string) string {
	var profiles []string
	for _, e := range entries {
		if e.Check == id && e.Profile != "" {
			profiles = append(profiles, e.Profile)
		}
	}
	if len(profiles) == 0 {
		return ""
	}
	return fmt.Sprintf("; listed only under profile %s", strings.Join(profiles, ", "))
}

// baselineRun is one run as a baseline judges it: the profile it ran
// under and the status of each check in it.
type baselineRun struct {
	profile  string
	statuses map[string]string // nil: the report's own statuses
}

func (u baselineRun) status(c Check) string {
	if u.statuses == nil {
		return c.Status
	}
	return u.statuses[c.ID] // "" (not applied) when the run did not have it
}

// baselineRuns are the runs r holds: each merged report, with the
// statuses it kept (none: nothing applied in it), or r itself when no
// merged report kept any (a run alone, or a merge by an older fray).
func (r *Report) baselineRuns() []baselineRun {
	var runs []baselineRun
	kept := false
	for _, s := range r.Shards {
		kept = kept || s.Statuses != nil
		statuses := s.Statuses
		if statuses == nil {
			statuses = map[string]string{}
		}
		runs = append(runs, baselineRun{profile: s.Profile, statuses: statuses})
	}
	if !kept {
		return []baselineRun{{profile: r.Profile}}
	}
	return runs
}

// matchEntry is the index of the entry that lists check id for a run
// under profile, or -1: an entry limited to that profile, else one for
// every profile.
func matchEntry(entries []BaselineEntry, id, profile string) int {
	any := -1
	for i, e := range entries {
		switch {
		case e.Check != id:
		case e.Profile != "" && e.Profile == profile:
			return i
		case e.Profile == "" && any < 0:
			any = i
		}
	}
	return any
}
