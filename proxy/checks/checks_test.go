package checks

import (
	"strings"
	"testing"
)

func TestCatalogIsWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Catalog() {
		if seen[c.ID] {
			t.Errorf("%s: listed twice", c.ID)
		}
		seen[c.ID] = true
		end, _, ok := strings.Cut(c.ID, ".")
		if !ok || (end != "server" && end != "client" && end != "e2e") {
			t.Errorf("%s: an id names the end it judges: server., client. or e2e.", c.ID)
		}
		if _, ok := ParseSeverity(string(c.Severity)); !ok || c.Severity == Off {
			t.Errorf("%s: default severity %q", c.ID, c.Severity)
		}
		if c.Summary == "" || c.Rule == "" || c.Source == "" {
			t.Errorf("%s: summary, rule and source are all owed", c.ID)
		}
		if got, ok := Lookup(c.ID); !ok || got != c {
			t.Errorf("Lookup(%s) = %+v, %v", c.ID, got, ok)
		}
	}
	if _, ok := Lookup("client.retry-honored"); ok {
		t.Error("Lookup found a check that does not exist")
	}
}

// TestSeverityFollowsTheRule: a check's default severity follows the
// keyword of the published sentence it quotes: MUST (or MUST NOT) is an
// error; SHOULD, MAY, or no published rule at all, a warning.
func TestSeverityFollowsTheRule(t *testing.T) {
	for _, c := range Catalog() {
		want := Warning
		if strings.Contains(c.Rule, "MUST") {
			want = Error
		}
		if c.Severity != want {
			t.Errorf("%s is %s, but its rule says %q", c.ID, c.Severity, c.Rule)
		}
	}
}

// TestSuiteGapsAreChecks: every requirement fray adds to the conformance
// suite's is judged by a check of the catalog, quotes its text, and bears
// the suite's check id or, where the suite has no row, fray's own.
func TestSuiteGapsAreChecks(t *testing.T) {
	n := 0
	for _, id := range IDs() {
		req, ok := SuiteGap(id)
		if !ok {
			continue
		}
		n++
		if req.Text == "" || (req.Check != id && !strings.HasPrefix(req.Check, "sep-")) {
			t.Errorf("%s: requirement %+v", id, req)
		}
	}
	if n != len(suiteGaps) {
		t.Errorf("%d of %d requirements belong to a check of the catalog", n, len(suiteGaps))
	}
}
