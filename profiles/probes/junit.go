package probes

import (
	"fmt"
	"io"
	"strings"

	"github.com/frayproxy/fray/proxy/report"
)

// WriteJUnit writes rs as JUnit XML to w: one <testsuite name="fray
// probes">, one <testcase> per probe. A probe that found its bug or
// failed is a failure, an inconclusive one is skipped (its trigger was not
// met, so it says nothing), a survivor passes.
func WriteJUnit(w io.Writer, rs []Result) error {
	s := report.JUnitSuite{Name: "fray probes", Time: "0"}
	for _, r := range rs {
		p := r.Probe
		c := report.JUnitCase{Classname: "fray.probe." + p.End, Name: p.Name, Time: "0",
			SystemOut: report.JUnitOut(fmt.Sprintf("%s: %s\nreport: %s\nfinding: %s\ntriggered: %v", r.Outcome, r.Detail, p.Issue, p.Finding, r.Triggered))}
		switch r.Outcome {
		case Found, Failed:
			c.Failure = report.JUnitFail(r.Detail, r.Outcome, strings.Join([]string{p.Bug, "report: " + p.Issue}, "\n"))
		case Inconclusive:
			c.Skipped = &report.JUnitSkipped{Message: r.Detail}
		}
		s.Cases = append(s.Cases, c)
	}
	if err := report.WriteJUnitSuite(w, s); err != nil {
		return fmt.Errorf("probes: %w", err)
	}
	return nil
}
