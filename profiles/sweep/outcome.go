package sweep

import (
	"fmt"
	"strings"

	"github.com/frayproxy/fray/proxy/report"
)

// ClientCheck is what Outcome.Check says when no check failed but the
// client command did.
const ClientCheck = "client-command"

// UnrecoverableCut is what Outcome.Check says when no check failed and
// the client command failed after a cut no conforming pair could recover
// (no event id had reached the client; a revision or a server that
// offers no resumption): the cell shows where recovery was impossible,
// not a bare client failure.
const UnrecoverableCut = "unrecoverable-cut"

// Outcome is what one run ended in: its verdict and what decided it.
type Outcome struct {
	// Verdict is the run's verdict: pass, fail or inconclusive.
	Verdict string `json:"verdict"`
	// Check is the check that decided it: the first check that failed
	// (in catalog order), or, when that is an end-to-end check whose
	// evidence cites a check of one end that failed or warned, the one it
	// cites (the cause, where the end-to-end check is the consequence);
	// UnrecoverableCut when only the client command failed, after a cut
	// no conforming pair could recover; ClientCheck when only the client
	// command failed otherwise; "" otherwise.
	Check string `json:"check,omitempty"`
	// Failed is the first check that failed, when Check is the cause it
	// cites.
	Failed string `json:"failed_check,omitempty"`
	// Why is the first evidence of that check, or the verdict's reason.
	Why string `json:"why,omitempty"`
}

// Decide reads the outcome of a run's report.
func Decide(r report.Report) Outcome {
	out := Outcome{Verdict: r.Verdict, Why: r.Why}
	for _, c := range r.Checks {
		if c.Status != report.StatusFail {
			continue
		}
		out.Check = c.ID
		if len(c.Evidence) > 0 {
			out.Why = c.Evidence[0].Message
			if cause := citedCause(r, c); cause != "" {
				out.Check, out.Failed = cause, c.ID
			}
		}
		return out
	}
	if r.Verdict == report.VerdictFail && r.Command.Failed() {
		out.Check = ClientCheck
		if r.Coverage != nil && r.Coverage.Unrecoverable > 0 {
			out.Check = UnrecoverableCut
		}
		if out.Why == "" {
			out.Why = r.Command.Error
		}
	}
	return out
}

// citedCause is the check of one end, failed or warned in r, that the
// first evidence of the end-to-end check c cites as "(check.id)"; "" when
// c is not end-to-end or cites none.
func citedCause(r report.Report, c report.Check) string {
	if !strings.HasPrefix(c.ID, "e2e.") {
		return ""
	}
	msg := c.Evidence[0].Message
	for _, o := range r.Checks {
		if strings.HasPrefix(o.ID, "e2e.") || (o.Status != report.StatusFail && o.Status != report.StatusWarn) {
			continue
		}
		if strings.Contains(msg, "("+o.ID+")") {
			return o.ID
		}
	}
	return ""
}

// IsFail reports whether the outcome is a fail.
func (o Outcome) IsFail() bool { return o.Verdict == report.VerdictFail }

// Short is the outcome in a matrix cell: "pass", "FAIL check.id",
// "inconclusive".
func (o Outcome) Short() string {
	switch {
	case o.IsFail() && o.Check != "":
		return "FAIL " + o.Check
	case o.IsFail():
		return "FAIL"
	}
	return o.Verdict
}

// String is the outcome with its reason.
func (o Outcome) String() string {
	if o.Why == "" {
		return o.Short()
	}
	return fmt.Sprintf("%s: %s", o.Short(), o.Why)
}
