package timeline

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/frayproxy/fray/proxy/report"
)

// statusOrder is the order checks are listed in: what needs attention
// first.
var statusOrder = []string{report.StatusFail, report.StatusWarn, report.StatusPass, report.StatusSkip}

// checks lists every check of r with its status, failed first, then
// warned, passed and skipped, each group in the report's (catalog) order.
// A status outside the four comes last.
func checks(r *report.Report) []Check {
	out := make([]Check, 0, len(r.Checks))
	for _, c := range r.Checks {
		k := Check{ID: c.ID, Status: c.Status, Severity: string(c.Severity), Summary: c.Summary, Count: c.Count, Applied: c.Applied}
		for _, e := range c.Excused {
			k.Excused = append(k.Excused, fmt.Sprintf("%s (%d)", e.Reason, e.Count))
		}
		out = append(out, k)
	}
	rank := func(status string) int {
		if i := slices.Index(statusOrder, status); i >= 0 {
			return i
		}
		return len(statusOrder)
	}
	slices.SortStableFunc(out, func(a, b Check) int { return cmp.Compare(rank(a.Status), rank(b.Status)) })
	return out
}

// findings lists the evidence of every check that failed or warned,
// failures first.
func findings(r *report.Report) []Finding {
	out := []Finding{}
	for _, status := range []string{report.StatusFail, report.StatusWarn} {
		for _, c := range r.Checks {
			if c.Status != status {
				continue
			}
			for i, e := range c.Evidence {
				f := Finding{
					Check: c.ID, Status: c.Status, Message: e.Message, Session: e.Session,
					Exchange: e.Exchange, Related: e.Related, EventIDs: e.EventIDs, AtMS: e.AtMS,
				}
				if e.Fault != nil {
					f.Fault = fmt.Sprintf("fault %d (%s)", e.Fault.Index, e.Fault.Kind)
				}
				if i == len(c.Evidence)-1 && c.Count > len(c.Evidence) {
					f.More = c.Count - len(c.Evidence)
				}
				out = append(out, f)
			}
			if len(c.Evidence) == 0 && c.Count > 0 {
				out = append(out, Finding{Check: c.ID, Status: c.Status, Message: c.Summary, More: c.Count})
			}
		}
	}
	return out
}
