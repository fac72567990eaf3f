package report

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/frayproxy/fray/proxy/checks"
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
//     fails, else inconclusive if any report's is, else pass; Why says how
//     many reports failed or were inconclusive, and why;
//   - the duration is the longest; the profile is the distinct profile names
//     joined by ", ", the seed the first report's; every report's profile,
//     seed, verdict and command are kept in Shards.
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
	out := Report{Schema: SchemaVersion, Seed: reports[0].Seed, Merged: len(reports)}
	var profiles []string
	checkAt := map[string]int{}
	faultAt := map[string]int{}
	for i, r := range reports {
		out.Shards = append(out.Shards, shardOf(r))
		if r.Profile != "" && !slices.Contains(profiles, r.Profile) {
			profiles = append(profiles, r.Profile)
		}
		out.DurationMS = max(out.DurationMS, r.DurationMS)
		out.Totals = addTotals(out.Totals, r.Totals)
		out.Partial = out.Partial || r.Partial
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
	}
	out.Verdict, out.Why = mergedVerdict(out)
	if out.Verdict == VerdictFail {
		var short []string
		for i, s := range out.Shards {
			if s.Shortfall != "" {
				short = append(short, fmt.Sprintf("report %d (%s)", i+1, s.Shortfall))
			}
		}
		if len(short) > 0 {
			out.Shortfall = fmt.Sprintf("%d of %d reports short: %s", len(short), len(out.Shards), strings.Join(short, "; "))
		}
	}
	return out, nil
}

// shardOf is what a merge keeps of one report as a whole.
func shardOf(r Report) Shard {
	s := Shard{Profile: r.Profile, Seed: r.Seed, Verdict: r.Verdict, Why: r.Why, Shortfall: r.ShortOf()}
	if r.Command != nil {
		c := *r.Command
		c.Args = slices.Clone(c.Args)
		s.Command = &c
	}
	for _, c := range r.Checks {
		if c.Status != StatusSkip && c.Status != "" {
			if s.Statuses == nil {
				s.Statuses = map[string]string{}
			}
			s.Statuses[c.ID] = c.Status
		}
	}
	return s
}

// mergedVerdict is fail when a report failed or a merged check fails,
// else inconclusive when a report was (or was interrupted), else pass,
// with the reason.
func mergedVerdict(out Report) (verdict, why string) {
	var failed, short, commands []string
	for i, s := range out.Shards {
		switch {
		case s.Verdict == VerdictFail || s.Command.Failed():
			failed = append(failed, fmt.Sprintf("report %d", i+1))
		case s.Verdict == VerdictInconclusive || s.Verdict == VerdictInterrupted:
			// A run a signal stopped showed too little to pass.
			short = append(short, fmt.Sprintf("report %d (%s)", i+1, s.Why))
		}
		if s.Command.Failed() {
			commands = append(commands, fmt.Sprintf("report %d: %s", i+1, s.Command.describe()))
		}
	}
	checksFailed := failedChecks(out.Checks)
	switch {
	case len(failed) > 0 || len(checksFailed) > 0:
		var why []string
		if len(checksFailed) > 0 {
			why = append(why, "failed: "+strings.Join(checksFailed, ", "))
		}
		if len(commands) > 0 {
			why = append(why, fmt.Sprintf("%d of %d commands failed (%s)", len(commands), len(out.Shards), strings.Join(commands, "; ")))
		}
		if len(why) == 0 {
			why = append(why, strings.Join(failed, ", ")+" failed")
		}
		return VerdictFail, strings.Join(why, "; ")
	case len(short) > 0:
		return VerdictInconclusive, fmt.Sprintf("%d of %d reports inconclusive: %s", len(short), len(out.Shards), strings.Join(short, "; "))
	}
	return VerdictPass, ""
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

// statusRank orders statuses from the mildest: skip, pass, warn, fail.
func statusRank(s string) int {
	return slices.Index([]string{StatusPass, StatusWarn, StatusFail}, s)
}

// severityRank orders severities from the mildest: off, warning, error.
func severityRank(s checks.Severity) int {
	return slices.Index([]checks.Severity{checks.Warning, checks.Error}, s)
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
