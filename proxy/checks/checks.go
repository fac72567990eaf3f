// Package checks is the catalog of what fray holds each end of an MCP
// connection to: every check's fixed id, its default severity and the
// published sentence it rests on. Severity follows the published text of
// the negotiated revision: what it says MUST (or MUST NOT) is an error,
// what it says SHOULD is a warning.
//
// It is a leaf, so that profiles can validate a [checks] table, the
// verifier can apply the checks and reports can carry severities without
// importing each other. Everything here is read-only and safe for
// concurrent use.
package checks

import "slices"

// Severity is what a failed check does to a verdict. The zero value is
// no severity; Parse rejects it.
type Severity string

// The severities a check can have.
const (
	// Error fails the run.
	Error Severity = "error"
	// Warning is reported and does not fail the run.
	Warning Severity = "warning"
	// Off turns the check off: it is not applied and reports nothing.
	Off Severity = "off"
)

// ParseSeverity returns the severity called s, and whether there is one.
func ParseSeverity(s string) (Severity, bool) {
	switch v := Severity(s); v {
	case Error, Warning, Off:
		return v, true
	}
	return "", false
}

// Info describes one check. The zero value describes no check.
type Info struct {
	// ID is the check's fixed id, e.g. "client.retry-honoured": the end it
	// judges ("server", "client", or "e2e" for both), then what it asks.
	ID string
	// Severity is the default severity: Error for the published text's
	// MUST, Warning for its SHOULD.
	Severity Severity
	// Summary says in one sentence what the check requires.
	Summary string
	// Rule quotes the published text the check rests on.
	Rule string
	// Source says where Rule stands.
	Source string
}

// Catalog returns every check in catalog order, the order of reports. The
// slice is a fresh copy, safe to keep and change.
func Catalog() []Info { return slices.Clone(catalog) }

// Lookup returns the catalog entry of id, and whether there is one.
func Lookup(id string) (Info, bool) {
	for _, c := range catalog {
		if c.ID == id {
			return c, true
		}
	}
	return Info{}, false
}

// IDs returns every check id in catalog order.
func IDs() []string {
	out := make([]string, len(catalog))
	for i, c := range catalog {
		out[i] = c.ID
	}
	return out
}
