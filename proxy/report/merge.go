package report

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/frayproxy/fray/checks"
)

// Merge combines the reports of several fray instances (e.g. one per
// shard of a soak test) into one:
//
//   - totals, check counts, applied counts and fault counts are summed;
//   - each check keeps its first MaxEvidence evidences in time order (at_ms,
//     ties in the order of the reports given), each marked with the Instance
//     it came from (its number in this call), since session and exchange
//     numbers are per instance;
//   - a check's status is the worst of its statuses (fail, warn, pass,
//     skip), its severity the strictest;
//   - the verdict is fail if any report's verdict is fail or any merged check
//     fails;
//   - the duration is the longest; the profile is the distinct profile names
//     joined by ", ", the seed the first report's; Command is the first one
//     present.
//
// Checks and fault kinds keep the order they first appear in. Merge refuses
// an empty list, and reports of another schema version than SchemaVersion,
// with an error wrapping ErrSchema that names the report.
func Merge(reports ...Report) (Report, error) {
	if len(reports) == 0 {
		return Report{}, errors.New("report: merge: no reports to merge")
	}
	for i, r := range reports {
		if r.Schema != SchemaVersion {
			return Report{}, fmt.Errorf("report: merge: report %d has %w version %d, report 1 has %d; only reports of version %d can be merged",
				i+1, ErrSchema, r.Schema, reports[0].Schema, SchemaVersion)
		}
	}
	out := Report{Schema: SchemaVersion, Verdict: VerdictPass, Seed: reports[0].Seed, Merged: len(reports)}
	var profiles []string
	checkAt := map[string]int{}
	faultAt := map[string]int{}
	for i, r := range reports {
		if r.Verdict == VerdictFail {
			out.Verdict = VerdictFail
		}
		if r.Profile != "" && !slices.Contains(profiles, r.Profile) {
			profiles = append(profiles, r.Profile)
		}
		out.DurationMS = max(out.DurationMS, r.DurationMS)
		out.Totals = addTotals(out.Totals, r.Totals)
		out.Partial = out.Partial || r.Partial
		if out.Command == nil && r.Command != nil {
			c := *r.Command
			c.Args = slices.Clone(c.Args)
			out.Command = &c
		}
		for _, f := range r.Faults {
			j, ok := faultAt[f.Kind]
			if !ok {
				j = len(out.Faults)
				faultAt[f.Kind] = j
				out.Faults = append(out.Faults, FaultCount{Kind: f.Kind})
			}
			out.Faults[j].Count += f.Count
		}
		for _, c := range r.Checks {
			j, ok := checkAt[c.ID]
			if !ok {
				j = len(out.Checks)
				checkAt[c.ID] = j
				out.Checks = append(out.Checks, Check{ID: c.ID, Summary: c.Summary, Severity: c.Severity, Status: c.Status})
			}
			mergeCheck(&out.Checks[j], c, i+1)
		}
	}
	out.Profile = strings.Join(profiles, ", ")
	for i := range out.Checks {
		c := &out.Checks[i]
		// Stable: equal times keep the order of the reports.
		slices.SortStableFunc(c.Evidence, func(a, b Evidence) int { return cmp.Compare(a.AtMS, b.AtMS) })
		if len(c.Evidence) > MaxEvidence {
			c.Evidence = slices.Clip(c.Evidence[:MaxEvidence])
		}
		if c.Status == StatusFail {
			out.Verdict = VerdictFail
		}
	}
	return out, nil
}

// mergeCheck adds c, from report number instance, into into.
func mergeCheck(into *Check, c Check, instance int) {
	into.Count += c.Count
	into.Applied += c.Applied
	if statusRank(c.Status) > statusRank(into.Status) {
		into.Status = c.Status
	}
	if severityRank(c.Severity) > severityRank(into.Severity) {
		into.Severity = c.Severity
	}
	if into.Summary == "" {
		into.Summary = c.Summary
	}
	for _, e := range c.Evidence {
		e.Related = slices.Clone(e.Related)
		e.EventIDs = slices.Clone(e.EventIDs)
		if e.Fault != nil {
			f := *e.Fault
			e.Fault = &f
		}
		e.Instance = instance
		into.Evidence = append(into.Evidence, e)
	}
}

func statusRank(s string) int {
	switch s {
	case StatusFail:
		return 3
	case StatusWarn:
		return 2
	case StatusPass:
		return 1
	}
	return 0
}

func severityRank(s checks.Severity) int {
	switch s {
	case checks.Error:
		return 2
	case checks.Warning:
		return 1
	}
	return 0
}

func addTotals(a, b Totals) Totals {
	return Totals{
		Sessions:    a.Sessions + b.Sessions,
		Exchanges:   a.Exchanges + b.Exchanges,
		Streams:     a.Streams + b.Streams,
		Events:      a.Events + b.Events,
		Resumptions: a.Resumptions + b.Resumptions,
		Faults:      a.Faults + b.Faults,
		Findings:    a.Findings + b.Findings,
	}
}
