package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/frayproxy/fray/proxy/checks"
)

// The statuses of a conformance check, as the MCP conformance suite
// (@modelcontextprotocol/conformance) writes them in checks.json.
const (
	ConformanceSuccess = "SUCCESS"
	ConformanceFailure = "FAILURE"
	ConformanceWarning = "WARNING"
	ConformanceSkipped = "SKIPPED"
	ConformanceInfo    = "INFO"
)

// ConformanceCheck is one element of the array in checks.json, with the
// fields of the suite's ConformanceCheck type (src/types.ts). fray leaves
// out metadata and logs, which the suite's type makes optional.
type ConformanceCheck struct {
	ID             string          `json:"id"`
	Name           string          `json:"name"`
	Description    string          `json:"description"`
	Status         string          `json:"status"`
	Timestamp      string          `json:"timestamp"`
	SpecReferences []SpecReference `json:"specReferences,omitempty"`
	Details        map[string]any  `json:"details,omitempty"`
	ErrorMessage   string          `json:"errorMessage,omitempty"`
}

// SpecReference names the published text a check rests on, as the suite
// does: an id and, when fray knows it, the URL of the section.
type SpecReference struct {
	ID  string `json:"id"`
	URL string `json:"url,omitempty"`
}

// The ids of the entries that stand for the run as a whole.
const (
	RunCommandID  = "fray.run.command"
	RunEvidenceID = "fray.run.evidence"
	RunBaselineID = "fray.run.baseline"
)

// WriteChecksJSON writes r as the MCP conformance suite's checks.json: an
// indented JSON array with one entry per check, in catalog order, then
// entries for the run itself (ConformanceChecks says what each holds).
// at is the timestamp every entry carries: the moment the verdict was
// reached.
func WriteChecksJSON(w io.Writer, r Report, at time.Time) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(ConformanceChecks(r, at)); err != nil {
		return fmt.Errorf("report: write checks.json: %w", err)
	}
	return nil
}

// ConformanceChecks maps r to the suite's checks. A check that passed is
// SUCCESS; one that failed at error severity FAILURE; one that found
// something at warning severity WARNING; one that never applied, or was
// switched off, SKIPPED. A finding's errorMessage counts the findings and
// quotes the first; details hold the severity, the counts, the evidence,
// the cases excused (faults fray injected itself, cases it cannot judge)
// and, with a baseline, the entry that lists the check. The baseline
// changes no status: a listed failure stays FAILURE, as in the suite's own
// files. Then come fray.run.command (when fray run wrapped a command:
// SUCCESS, or FAILURE when it failed), fray.run.evidence (SUCCESS when
// fray saw enough to judge, FAILURE when it did not, INFO when
// --allow-inconclusive accepted that; details hold the verdict, the
// profile and the totals) and fray.run.baseline (with a baseline: SUCCESS,
// or FAILURE when a listed check passed and its entry is to be removed).
// The result is never nil.
func ConformanceChecks(r Report, at time.Time) []ConformanceCheck {
	ts := at.UTC().Format("2006-01-02T15:04:05.000Z")
	out := make([]ConformanceCheck, 0, len(r.Checks)+3)
	for _, c := range r.Checks {
		out = append(out, conformanceCheck(c, r.Baseline, ts))
	}
	if r.Command != nil {
		cc := ConformanceCheck{ID: RunCommandID, Name: RunCommandID, Timestamp: ts, Status: ConformanceSuccess,
			Description: "The client command fray run wrapped exits 0.",
			Details:     map[string]any{"args": r.Command.Args, "exit_code": r.Command.ExitCode}}
		if r.Command.Failed() {
			cc.Status, cc.ErrorMessage = ConformanceFailure, "the client command failed: "+r.Command.describe()
		}
		out = append(out, cc)
	}
	out = append(out, evidenceCheck(r, ts))
	if b := r.Baseline; b != nil {
		cc := ConformanceCheck{ID: RunBaselineID, Name: RunBaselineID, Timestamp: ts, Status: ConformanceSuccess,
			Description: "Every check the baseline " + b.File + " lists as failing still fails or warns.",
			Details: map[string]any{"file": b.File, "verdict": b.Verdict, "expected": b.Expected, "fixed": b.Fixed,
				"unexpected": b.Unexpected, "unexercised": b.Unexercised}}
		if b.Why != "" {
			cc.Details["why"] = b.Why
		}
		if len(b.Fixed) > 0 {
			cc.Status = ConformanceFailure
			cc.ErrorMessage = fmt.Sprintf("fixed: %s passed; remove it from %s", cite(b.Fixed), b.File)
		}
		out = append(out, cc)
	}
	return out
}

// conformanceCheck maps one check.
func conformanceCheck(c Check, b *Baselined, ts string) ConformanceCheck {
	cc := ConformanceCheck{ID: c.ID, Name: c.ID, Description: c.Summary, Timestamp: ts,
		Details: map[string]any{"severity": c.Severity, "applied": c.Applied}}
	if info, ok := checks.Lookup(c.ID); ok {
		if cc.Description == "" {
			cc.Description = info.Summary
		}
		cc.SpecReferences = []SpecReference{{ID: info.Source, URL: specURL(info.Source)}}
		cc.Details["rule"] = info.Rule
		if req, ok := checks.SuiteGap(c.ID); ok {
			cc.Details["requirement"] = req
		}
	}
	switch c.Status {
	case StatusPass:
		cc.Status = ConformanceSuccess
	case StatusFail, StatusWarn:
		cc.Status = ConformanceFailure
		if c.Status == StatusWarn {
			cc.Status = ConformanceWarning
		}
		cc.ErrorMessage = plural(c.Count, "finding")
		if len(c.Evidence) > 0 {
			cc.ErrorMessage += ": " + FormatEvidence(c.Evidence[0])
		}
		cc.Details["count"] = c.Count
		cc.Details["evidence"] = normalized(Report{Checks: []Check{c}}).Checks[0].Evidence
	default:
		cc.Status = ConformanceSkipped
		cc.Details["skipped"] = skipMessage(c)
	}
	if len(c.Excused) > 0 {
		cc.Details["excused"] = c.Excused
	}
	if e, state := b.Find(c.ID); state != "" {
		cc.Details["baseline"] = map[string]any{"state": state, "file": b.File, "entry": e}
	}
	return cc
}

// evidenceCheck is the entry that says whether fray saw enough to judge.
func evidenceCheck(r Report, ts string) ConformanceCheck {
	cc := ConformanceCheck{ID: RunEvidenceID, Name: RunEvidenceID, Timestamp: ts, Status: ConformanceSuccess,
		Description: "fray saw enough to judge: traffic went through it and reached the upstream, a JSON-RPC request was forwarded, and the profile's faults fired.",
		Details: map[string]any{"verdict": r.Verdict, "seed": r.Seed, "duration_ms": r.DurationMS,
			"totals": r.Totals, "faults": normalized(r).Faults}}
	if r.Why != "" {
		cc.Details["why"] = r.Why
	}
	if r.Profile != "" {
		cc.Details["profile"] = r.Profile
	}
	if r.Merged > 0 {
		cc.Details["merged"] = r.Merged
	}
	if r.Verdict == VerdictInterrupted {
		cc.Status, cc.ErrorMessage = ConformanceFailure, "interrupted: "+r.Why
	} else if short := r.ShortOf(); short != "" {
		cc.Status, cc.ErrorMessage = ConformanceFailure, "inconclusive: "+short
		if r.Accepted {
			cc.Status, cc.ErrorMessage = ConformanceInfo, "inconclusive, accepted: "+short
		}
	}
	return cc
}

// specURL is the address of the section a check's source names: the
// 2025-11-25 transports page and its anchor, or the JSON-RPC 2.0 response
// object; "" for a source fray has no address for.
func specURL(source string) string {
	const transports = "2025-11-25 transports, "
	switch {
	case strings.HasPrefix(source, transports):
		section, _, _ := strings.Cut(strings.TrimPrefix(source, transports), ",")
		anchor := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(section)), " ", "-")
		return "https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#" + anchor
	case strings.HasPrefix(source, "JSON-RPC 2.0"):
		return "https://www.jsonrpc.org/specification#response_object"
	}
	return ""
}
