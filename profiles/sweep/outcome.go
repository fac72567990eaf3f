package sweep

import (
	"fmt"

	"github.com/frayproxy/fray/proxy/report"
)

// ClientCheck is what Outcome.Check says when no check failed but the
// client command did.
const ClientCheck = "client-command"

// Outcome is what one run ended in: its verdict and what decided it.
type Outcome struct {
	// Verdict is the run's verdict: pass, fail or inconclusive.
	Verdict string `json:"verdict"`
	// Check is the id of the first check that failed (in catalog order),
	// ClientCheck when only the client command failed, "" otherwise.
	Check string `json:"check,omitempty"`
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
		}
		return out
	}
	if r.Verdict == report.VerdictFail && r.Command.Failed() {
		out.Check = ClientCheck
		if r.Command.Error != "" {
			out.Why = r.Command.Error
		}
	}
	return out
}

// Failed reports whether the outcome is a fail.
func (o Outcome) Failed() bool { return o.Verdict == report.VerdictFail }

// Short is the outcome in a matrix cell: "pass", "FAIL check.id",
// "inconclusive".
func (o Outcome) Short() string {
	switch {
	case o.Failed() && o.Check != "":
		return "FAIL " + o.Check
	case o.Failed():
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
