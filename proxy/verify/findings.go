package verify

import (
	"slices"
	"sort"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/report"
)

// level is how grave one finding is before the check's severity caps it.
type level uint8

const (
	levelError level = iota
	levelWarning
)

// checkState is what one check has found so far.
type checkState struct {
	sev      checks.Severity
	applied  int
	count    int
	errors   int // findings that count at error level
	evidence []report.Evidence
	excused  map[string]int
}

func (v *Verifier) off(c checkID) bool { return v.checks[c].sev == checks.Off }

// apply counts one case the check judged.
func (v *Verifier) apply(c checkID) {
	if !v.off(c) {
		v.checks[c].applied++
	}
}

// excuse counts one case the check did not judge or forgave, for reason.
func (v *Verifier) excuse(c checkID, reason string) {
	if v.off(c) {
		return
	}
	cs := &v.checks[c]
	if cs.excused == nil {
		cs.excused = make(map[string]int)
	}
	cs.excused[reason]++
}

// find records one finding of check c. The earliest MaxEvidence findings
// (by their time) keep their evidence.
func (v *Verifier) find(c checkID, lvl level, ev report.Evidence) {
	if v.off(c) {
		return
	}
	cs := &v.checks[c]
	cs.count++
	v.prog.Findings++
	if lvl == levelError && cs.sev == checks.Error {
		cs.errors++
	}
	i := sort.Search(len(cs.evidence), func(i int) bool { return cs.evidence[i].AtMS > ev.AtMS })
	if i >= report.MaxEvidence {
		return
	}
	cs.evidence = slices.Insert(cs.evidence, i, ev)
	if len(cs.evidence) > report.MaxEvidence {
		cs.evidence = cs.evidence[:report.MaxEvidence]
	}
}

// status is the check's status as the report gives it.
func (cs *checkState) status() string {
	switch {
	case cs.sev == checks.Off || cs.applied == 0 && cs.count == 0:
		return report.StatusSkip
	case cs.errors > 0:
		return report.StatusFail
	case cs.count > 0:
		return report.StatusWarn
	}
	return report.StatusPass
}

func (cs *checkState) excuses() []report.Excuse {
	if len(cs.excused) == 0 {
		return nil
	}
	out := make([]report.Excuse, 0, len(cs.excused))
	for r, n := range cs.excused {
		out = append(out, report.Excuse{Reason: r, Count: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Reason < out[j].Reason })
	return out
}

// evidence builds the evidence of a finding.
func evidence(msg string, sess *session, ex uint64, at time.Duration) report.Evidence {
	e := report.Evidence{Message: msg, Exchange: ex, AtMS: at.Milliseconds()}
	if sess != nil {
		e.Session = sess.seq
	}
	return e
}

// anyTrait matches every firing in faultWith.
const anyTrait faults.Traits = 0

// faultWith returns the first firing that has one of the traits (any
// firing for anyTrait) as a report reference, nil when none. The verifier
// knows what a fault did by its traits only, never by its kind's name, so
// that a kind added later is attributed as it declares.
func faultWith(fired []faults.Firing, traits faults.Traits) *report.FaultRef {
	return sameFault(nil, fired, traits)
}

// sameFault is faultWith, returning cur when it already names the fault
// found, so that a fault firing on every event makes one reference, not
// one per event.
func sameFault(cur *report.FaultRef, fired []faults.Firing, traits faults.Traits) *report.FaultRef {
	for _, f := range fired {
		if traits == anyTrait || f.Traits.Any(traits) {
			if cur != nil && cur.Index == f.Index && cur.Kind == f.Kind {
				return cur
			}
			return &report.FaultRef{Index: f.Index, Kind: f.Kind}
		}
	}
	return nil
}

// related lists exchange numbers, leaving out zeros and duplicates.
func related(nums ...uint64) []uint64 {
	var out []uint64
	for _, n := range nums {
		if n != 0 && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// firstFault returns the first non-nil reference.
func firstFault(refs ...*report.FaultRef) *report.FaultRef {
	for _, r := range refs {
		if r != nil {
			return r
		}
	}
	return nil
}
