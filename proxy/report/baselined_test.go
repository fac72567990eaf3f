package report_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/frayproxy/fray/proxy/report"
)

// entry is a baseline entry at line.
func entry(line int, spec string) report.BaselineEntry {
	e := report.BaselineEntry{Check: spec, Line: line}
	if p, id, ok := strings.Cut(spec, ":"); ok {
		e.Profile, e.Check = p, id
	}
	return e
}

// run is a concluded report of one run under profile with checks.
func run(profile, short string, cs ...report.Check) report.Report {
	r := report.Report{Schema: report.SchemaVersion, Profile: profile, Checks: cs}
	r.Conclude(short)
	return r
}

func entries(es []report.BaselineEntry) string {
	var s []string
	for _, e := range es {
		s = append(s, e.Entry())
	}
	return strings.Join(s, " ")
}

func TestApplyBaseline(t *testing.T) {
	fail := func(id string) report.Check { return check(id, report.StatusFail, 2, 10) }
	warn := func(id string) report.Check { return check(id, report.StatusWarn, 1, 10) }
	pass := func(id string) report.Check { return check(id, report.StatusPass, 0) }
	skip := func(id string) report.Check { return check(id, report.StatusSkip, 0) }
	for _, tc := range []struct {
		name     string
		r        report.Report
		entries  []report.BaselineEntry
		verdict  string
		why      string // a part of Why; "" for none
		expected string // entries, space-separated
		fixed    string
		unexp    string // check ids
		unexerc  string
		failed   bool // Outcome's checksFailed
	}{
		{name: "a listed failure is expected",
			r:       run("p", "", fail("server.a"), pass("client.b")),
			entries: []report.BaselineEntry{entry(2, "server.a")},
			verdict: report.VerdictPass, expected: "server.a"},
		{name: "a listed warning is expected",
			r:       run("p", "", warn("server.a")),
			entries: []report.BaselineEntry{entry(2, "server.a")},
			verdict: report.VerdictPass, expected: "server.a"},
		{name: "an unlisted failure fails",
			r:       run("p", "", fail("server.a"), fail("client.b")),
			entries: []report.BaselineEntry{entry(2, "server.a")},
			verdict: report.VerdictFail, why: "failed, not in the baseline: client.b (2)",
			expected: "server.a", unexp: "client.b", failed: true},
		{name: "an unlisted warning does not fail, as without a baseline",
			r:       run("p", "", warn("server.a")),
			verdict: report.VerdictPass},
		{name: "a listed check that passed is fixed and fails the build",
			r:       run("p", "", pass("server.a")),
			entries: []report.BaselineEntry{entry(4, "server.a")},
			verdict: report.VerdictFail, why: "fixed, remove from base.yml: server.a (line 4)",
			fixed: "server.a", failed: true},
		{name: "a listed check that did not apply says nothing",
			r:       run("p", "", skip("server.a")),
			entries: []report.BaselineEntry{entry(2, "server.a")},
			verdict: report.VerdictPass, unexerc: "server.a"},
		{name: "a baseline never makes an inconclusive run pass",
			r:       run("p", "no fault fired", fail("server.a")),
			entries: []report.BaselineEntry{entry(2, "server.a")},
			verdict: report.VerdictInconclusive, why: "no fault fired", expected: "server.a"},
		{name: "a run inconclusive with nothing failed stays inconclusive",
			r:       run("p", "no exchange went through fray"),
			verdict: report.VerdictInconclusive, why: "no exchange went through fray"},
		{name: "an entry for another profile does not apply",
			r:       run("p", "", fail("server.a")),
			entries: []report.BaselineEntry{entry(2, "q:server.a")},
			verdict: report.VerdictFail, why: "not in the baseline: server.a (2; listed only under profile q)", unexp: "server.a", failed: true},
		{name: "an entry for this profile applies",
			r:       run("p", "", fail("server.a")),
			entries: []report.BaselineEntry{entry(2, "q:server.a"), entry(3, "p:server.a")},
			verdict: report.VerdictPass, expected: "p:server.a"},
		{name: "a failed command fails whatever the baseline lists",
			r: func() report.Report {
				r := report.Report{Schema: 1, Checks: []report.Check{fail("server.a")}, Command: &report.Command{Args: []string{"c"}, ExitCode: 1, Error: "exit status 1"}}
				r.Conclude("")
				return r
			}(),
			entries: []report.BaselineEntry{entry(2, "server.a")},
			verdict: report.VerdictFail, why: "the client command failed: exit status 1", expected: "server.a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.r
			r.ApplyBaseline("base.yml", tc.entries)
			b := r.Baseline
			if b == nil || b.File != "base.yml" {
				t.Fatalf("Baseline %+v", b)
			}
			if b.Verdict != tc.verdict || (tc.why == "") != (b.Why == "") || !strings.Contains(b.Why, tc.why) {
				t.Errorf("verdict %s (%s), want %s (%s)", b.Verdict, b.Why, tc.verdict, tc.why)
			}
			if got := entries(b.Expected); got != tc.expected {
				t.Errorf("expected %q, want %q", got, tc.expected)
			}
			if got := entries(b.Fixed); got != tc.fixed {
				t.Errorf("fixed %q, want %q", got, tc.fixed)
			}
			if got := strings.Join(b.Unexpected, " "); got != tc.unexp {
				t.Errorf("unexpected %q, want %q", got, tc.unexp)
			}
			if got := entries(b.Unexercised); got != tc.unexerc {
				t.Errorf("unexercised %q, want %q", got, tc.unexerc)
			}
			v, why, failed := r.Outcome()
			if v != b.Verdict || why != b.Why || failed != tc.failed {
				t.Errorf("Outcome %s %q %v, want %s %q %v", v, why, failed, b.Verdict, b.Why, tc.failed)
			}
			if r.Verdict != tc.r.Verdict {
				t.Errorf("the run's own verdict changed: %s, was %s", r.Verdict, tc.r.Verdict)
			}
		})
	}
}

// TestBaselineJudgesEachMergedRun: in a merged report an entry limited to
// a profile covers the runs under it, not a failure of the same check in a
// run under another profile.
func TestBaselineJudgesEachMergedRun(t *testing.T) {
	a := run("lossy", "", check("client.backoff", report.StatusFail, 1, 5))
	b := run("steady", "", check("client.backoff", report.StatusFail, 1, 7))
	c := run("steady", "", check("client.backoff", report.StatusPass, 0))
	for _, tc := range []struct {
		name    string
		reports []report.Report
		entries []report.BaselineEntry
		verdict string
		summary string // expected/fixed/unexpected
	}{
		{"the other profile's failure is unexpected", []report.Report{a, b},
			[]report.BaselineEntry{entry(1, "lossy:client.backoff")}, report.VerdictFail,
			"lossy:client.backoff//client.backoff"},
		{"listed for both", []report.Report{a, b},
			[]report.BaselineEntry{entry(1, "lossy:client.backoff"), entry(2, "steady:client.backoff")}, report.VerdictPass,
			"lossy:client.backoff steady:client.backoff//"},
		{"expected in one run, passed in another: still expected", []report.Report{b, c},
			[]report.BaselineEntry{entry(1, "client.backoff")}, report.VerdictPass,
			"client.backoff//"},
		{"fixed under its profile while failing under another", []report.Report{a, c},
			[]report.BaselineEntry{entry(1, "lossy:client.backoff"), entry(2, "steady:client.backoff")}, report.VerdictFail,
			"lossy:client.backoff/steady:client.backoff/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := merge(t, tc.reports...)
			m.ApplyBaseline("base.yml", tc.entries)
			got := fmt.Sprintf("%s/%s/%s", entries(m.Baseline.Expected), entries(m.Baseline.Fixed), strings.Join(m.Baseline.Unexpected, " "))
			if m.Baseline.Verdict != tc.verdict || got != tc.summary {
				t.Errorf("%s %s (%s), want %s %s", m.Baseline.Verdict, got, m.Baseline.Why, tc.verdict, tc.summary)
			}
		})
	}
}

// TestMergeKeepsWhatEachRunMissed: a merged verdict that fails still says
// which runs saw too little, so that a baseline that sets the failures
// aside leaves it inconclusive.
func TestMergeKeepsWhatEachRunMissed(t *testing.T) {
	failed := run("p", "", check("server.a", report.StatusFail, 1, 3))
	short := run("p", "no fault fired")
	m := merge(t, failed, short)
	if m.Verdict != report.VerdictFail || !strings.Contains(m.ShortOf(), "no fault fired") {
		t.Fatalf("merged %s, short of %q", m.Verdict, m.ShortOf())
	}
	m.ApplyBaseline("base.yml", []report.BaselineEntry{entry(1, "server.a")})
	if m.Baseline.Verdict != report.VerdictInconclusive || !strings.Contains(m.Baseline.Why, "report 2 (no fault fired)") {
		t.Errorf("baselined %s (%s), want inconclusive naming report 2", m.Baseline.Verdict, m.Baseline.Why)
	}
}

// TestConcludeKeepsShortfall: a run that failed and also saw too little
// keeps what it missed.
func TestConcludeKeepsShortfall(t *testing.T) {
	r := run("p", "no fault fired", check("server.a", report.StatusFail, 1, 3))
	if r.Verdict != report.VerdictFail || r.ShortOf() != "no fault fired" {
		t.Errorf("verdict %s, short of %q", r.Verdict, r.ShortOf())
	}
	r.Conclude("")
	if r.ShortOf() != "" {
		t.Errorf("a run that saw enough is short of %q", r.ShortOf())
	}
}
