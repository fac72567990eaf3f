package report

import (
	"fmt"
	"io"
	"strings"
)

// writeBaseline writes what the summary says of a baseline: the verdict
// once its entries are set aside, why it is not a pass, and its entries by
// what became of them. Nothing when r has no baseline.
func writeBaseline(ew io.Writer, r Report) {
	b := r.Baseline
	if b == nil {
		return
	}
	fmt.Fprintf(ew, "  with baseline %s: verdict %s\n", b.File, strings.ToUpper(b.Verdict))
	if b.Why != "" {
		fmt.Fprintf(ew, "    why: %s\n", b.Why)
	}
	for _, l := range []struct {
		label   string
		entries []BaselineEntry
	}{
		{"expected (still failing)", b.Expected},
		{"fixed (remove these entries)", b.Fixed},
		{"not exercised in this run", b.Unexercised},
	} {
		if len(l.entries) == 0 {
			continue
		}
		fmt.Fprintf(ew, "    %s: %s\n", l.label, cite(l.entries))
	}
}

// expectedMessage is the JUnit skip message of a failed check that the
// baseline's entry e lists: the findings, the first of them, and the entry.
func expectedMessage(c Check, e BaselineEntry, file string) string {
	msg := fmt.Sprintf("expected failure, listed in %s: %s; %s", file, e, plural(c.Count, "finding"))
	if len(c.Evidence) > 0 {
		msg += ", the first " + FormatEvidence(c.Evidence[0])
	}
	return msg
}

// baselineCase is the JUnit case "fray.run baseline": failed while an entry
// of the baseline is fixed and still listed.
func baselineCase(b *Baselined) JUnitCase {
	tc := JUnitCase{Classname: "fray.run", Name: "baseline", Time: "0"}
	if len(b.Fixed) > 0 {
		msg := fmt.Sprintf("fixed: %s passed; remove it from %s", cite(b.Fixed), b.File)
		tc.Failure = JUnitFail(msg, "baseline", msg+"\n")
	}
	return tc
}
