package report_test

import (
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/report"
)

// TestChecksJSONNamesSuiteGaps: a check that judges a rule the
// conformance suite leaves untested carries that rule in details, in the
// form of the suite's requirement files; other checks carry none.
func TestChecksJSONNamesSuiteGaps(t *testing.T) {
	r := report.Report{Checks: []report.Check{
		{ID: checks.ServerSilentAfterCancel, Status: report.StatusPass, Applied: 1},
		{ID: checks.ClientRetryHonoured, Status: report.StatusPass, Applied: 1},
	}}
	cc := report.ConformanceChecks(r, time.Unix(0, 0))
	req, ok := cc[0].Details["requirement"].(checks.Requirement)
	if !ok || req.Check != "sep-2575-http-server-stops-on-cancel" || req.Text == "" {
		t.Errorf("%s: requirement %#v", cc[0].ID, cc[0].Details["requirement"])
	}
	if _, ok := cc[1].Details["requirement"]; ok {
		t.Errorf("%s names a requirement the suite tests", cc[1].ID)
	}
}
