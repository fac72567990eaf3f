package probes

import (
	"fmt"
	"slices"
	"strings"

	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy/report"
)

// The outcomes of a probe's run.
const (
	// Found: the probe's finding was made: the peer has the bug.
	Found = "found"
	// Survived: the probe's faults fired, its check judged the peer and
	// found nothing, and the run passed.
	Survived = "survived"
	// Failed: the faults fired and the run failed, but not on the
	// probe's finding (another check, or the wrapped command).
	Failed = "failed"
	// Inconclusive: the faults did not all fire, or the probe's check
	// had nothing to judge: the run says nothing about the bug.
	Inconclusive = "inconclusive"
)

// Result is what one probe's run showed. The zero value is no result.
type Result struct {
	// Probe is the probe that ran.
	Probe Probe
	// Triggered is set when every fault kind of the probe's profile fired.
	Triggered bool
	// Outcome is Found, Survived, Failed or Inconclusive.
	Outcome string
	// Detail says why, in one line: the finding's first evidence, what
	// failed, or what fray did not see.
	Detail string
}

// Judge reads the report of a run of p with p's profile and says what it
// showed; kinds are the fault kinds that must have fired
// (Probe.TriggerKinds). A probe whose trigger was not met is
// inconclusive, never a pass; its finding made is found all the same.
func Judge(p Probe, kinds []string, r report.Report) Result {
	res := Result{Probe: p, Triggered: fired(kinds, r.Faults)}
	c := findCheck(r.Checks, p.Finding)
	switch {
	case c != nil && c.Count > 0:
		res.Outcome = Found
		res.Detail = p.Finding
		if len(c.Evidence) > 0 {
			res.Detail += ": " + c.Evidence[0].Message
		}
	case !res.Triggered:
		res.Outcome = Inconclusive
		res.Detail = "the trigger was not met: " + missing(kinds, r.Faults)
	case r.Verdict == report.VerdictFail:
		res.Outcome = Failed
		res.Detail = r.Why
	case r.Verdict == report.VerdictInconclusive:
		res.Outcome = Inconclusive
		res.Detail = r.Why
	case p.Judged && (c == nil || c.Applied == 0):
		res.Outcome = Inconclusive
		res.Detail = fmt.Sprintf("%s had nothing to judge; the probe needs: %s", p.Finding, p.Needs)
	case p.Judged && len(c.Excused) > 0:
		// A case the check could not judge may be the one the probe is
		// about: what it did judge (other streams, say) says nothing.
		res.Outcome = Inconclusive
		res.Detail = fmt.Sprintf("%s could not judge %d case(s) (%s); the probe needs: %s", p.Finding, excused(c), c.Excused[0].Reason, p.Needs)
	case r.Totals.Sessions < p.Sessions:
		res.Outcome = Inconclusive
		res.Detail = fmt.Sprintf("%d session(s), the probe needs %d: %s", r.Totals.Sessions, p.Sessions, p.Needs)
	case c == nil || c.Applied == 0:
		// Some checks apply only where a peer could be wrong (a give-up
		// after the trigger): the trigger met, every request answered and
		// nothing found is the peer surviving it.
		res.Outcome = Survived
		res.Detail = "no " + p.Finding + " finding: the trigger was met and every check passed"
	default:
		res.Outcome = Survived
		res.Detail = fmt.Sprintf("%s passed (%d judged)", p.Finding, c.Applied)
	}
	return res
}

// KindsOf lists the distinct fault kinds of a profile's faults, in order:
// what must have fired for a run of the profile to have met its trigger.
func KindsOf(prof *profiles.Profile) []string {
	var out []string
	for _, f := range prof.Faults {
		if !slices.Contains(out, f.Kind) {
			out = append(out, f.Kind)
		}
	}
	return out
}

// excused counts the cases c excused.
func excused(c *report.Check) int {
	n := 0
	for _, e := range c.Excused {
		n += e.Count
	}
	return n
}

func findCheck(cs []report.Check, id string) *report.Check {
	for i := range cs {
		if cs[i].ID == id {
			return &cs[i]
		}
	}
	return nil
}

func fired(kinds []string, fc []report.FaultCount) bool {
	return len(kinds) > 0 && missing(kinds, fc) == ""
}

// missing names the kinds that never fired, "" when all did.
func missing(kinds []string, fc []report.FaultCount) string {
	var out []string
	for _, k := range kinds {
		if !slices.ContainsFunc(fc, func(f report.FaultCount) bool { return f.Kind == k && f.Count > 0 }) {
			out = append(out, k)
		}
	}
	if len(out) == 0 {
		return ""
	}
	return "no " + strings.Join(out, ", no ") + " fault fired"
}

// Worst is the outcome that decides the exit code of a set of results:
// Found or Failed before Inconclusive before Survived; "" for none.
func Worst(rs []Result) string {
	rank := map[string]int{Survived: 1, Inconclusive: 2, Failed: 3, Found: 3}
	worst := ""
	for _, r := range rs {
		if rank[r.Outcome] > rank[worst] {
			worst = r.Outcome
		}
	}
	return worst
}
