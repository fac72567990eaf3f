package probes

import (
	"encoding/xml"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/report"
)

// TestCatalogIsWhole: every probe has a name, a public report, an end, a
// revision, a finding the check catalog knows, and a profile that parses
// and validates as any profile file does; the catalog holds at least the
// 24 probes `fray probes list` promises.
func TestCatalogIsWhole(t *testing.T) {
	all := All()
	if len(all) < 24 {
		t.Errorf("%d probes, want at least 24", len(all))
	}
	seen := map[string]bool{}
	for _, p := range all {
		if seen[p.Name] {
			t.Errorf("probe %s twice", p.Name)
		}
		seen[p.Name] = true
		if !strings.HasPrefix(p.Issue, "https://github.com/") || p.Revision == "" || p.Bug == "" {
			t.Errorf("%s: issue %q, revision %q, bug %q", p.Name, p.Issue, p.Revision, p.Bug)
		}
		if p.End != Client && p.End != Server {
			t.Errorf("%s: end %q", p.Name, p.End)
		}
		if _, ok := checks.Lookup(p.Finding); !ok {
			t.Errorf("%s: finding %q is no check", p.Name, p.Finding)
		}
		prof, err := p.Profile()
		if err != nil {
			t.Errorf("%s: %v", p.Name, err)
			continue
		}
		if len(KindsOf(prof)) == 0 {
			t.Errorf("%s: the profile has no fault", p.Name)
		}
		for _, k := range p.TriggerKinds(prof) {
			if !slices.Contains(KindsOf(prof), k) {
				t.Errorf("%s: trigger kind %s is not in the profile", p.Name, k)
			}
		}
		if (p.Judged || p.Sessions > 0) && p.Needs == "" {
			t.Errorf("%s: a probe that can be inconclusive for want of what the peers do says what it needs", p.Name)
		}
		if want := "probe-" + p.Name; prof.Name != want {
			t.Errorf("%s: profile name %q, want %q", p.Name, prof.Name, want)
		}
	}
}

func TestSelect(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want int // probes selected; -1 for an error
		err  string
	}{
		{"all", len(All()), ""},
		{"resume-token-dropped", 1, ""},
		{"resume-token-dropped, replay-duplicate", 2, ""},
		{"resume-token-droped", -1, `did you mean "resume-token-dropped"`},
		{"", -1, `no probe ""`},
	} {
		got, err := Select(tc.spec)
		switch {
		case tc.want < 0 && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("Select(%q): %v, want an error with %q", tc.spec, err, tc.err)
		case tc.want >= 0 && (err != nil || len(got) != tc.want):
			t.Errorf("Select(%q): %d probes, %v; want %d", tc.spec, len(got), err, tc.want)
		}
	}
	client, _ := Select(Client)
	server, _ := Select(Server)
	if len(client)+len(server) != len(All()) || len(server) == 0 {
		t.Errorf("%d client and %d server probes of %d", len(client), len(server), len(All()))
	}
}

// TestJudge: the outcome follows the report: the finding made wins; a
// trigger not met is inconclusive, never a pass.
func TestJudge(t *testing.T) {
	p, _ := Lookup("transient-503-on-resume")
	kinds := []string{"close", "status"}
	fired := []report.FaultCount{{Kind: "close", Count: 1}, {Kind: "status", Count: 1}}
	found := []report.Check{{ID: p.Finding, Count: 1, Applied: 1, Evidence: []report.Evidence{{Message: "gave up"}}}}
	for _, tc := range []struct {
		name string
		r    report.Report
		want string
	}{
		{"found", report.Report{Verdict: report.VerdictFail, Faults: fired, Checks: found}, Found},
		{"survived", report.Report{Verdict: report.VerdictPass, Faults: fired}, Survived},
		{"not triggered", report.Report{Verdict: report.VerdictPass, Faults: fired[:1]}, Inconclusive},
		{"no fault at all", report.Report{Verdict: report.VerdictPass}, Inconclusive},
		{"another failure", report.Report{Verdict: report.VerdictFail, Why: "the client exited 1", Faults: fired}, Failed},
		{"run inconclusive", report.Report{Verdict: report.VerdictInconclusive, Faults: fired}, Inconclusive},
	} {
		got := Judge(p, kinds, tc.r)
		if got.Outcome != tc.want {
			t.Errorf("%s: %s (%s), want %s", tc.name, got.Outcome, got.Detail, tc.want)
		}
	}
	if got := Judge(p, kinds, report.Report{Faults: fired, Checks: found}); !strings.Contains(got.Detail, "gave up") {
		t.Errorf("a finding's detail %q lacks its evidence", got.Detail)
	}
}

// TestJudgeNeeds: a probe whose peers must do something more survives only
// when they did it: its check judged a case, or the run held the sessions
// it needs; otherwise the run passed vacuously and is inconclusive.
func TestJudgeNeeds(t *testing.T) {
	fired := []report.FaultCount{{Kind: "close", Count: 1}}
	kinds := []string{"close"}
	judged, _ := Lookup("cut-call-left-pending")
	shared, _ := Lookup("replay-other-sessions")
	pass := func(applied, sessions int) report.Report {
		return report.Report{Verdict: report.VerdictPass, Faults: fired, Totals: report.Totals{Sessions: sessions},
			Checks: []report.Check{{ID: judged.Finding, Applied: applied}, {ID: shared.Finding, Applied: applied}}}
	}
	for _, tc := range []struct {
		name string
		p    Probe
		r    report.Report
		want string
	}{
		{"judged", judged, pass(1, 0), Survived},
		{"nothing judged", judged, pass(0, 0), Inconclusive},
		{"a case excused", judged, excusedToo(pass(1, 0)), Inconclusive},
		{"two sessions", shared, pass(0, 2), Survived},
		{"one session", shared, pass(0, 1), Inconclusive},
	} {
		got := Judge(tc.p, kinds, tc.r)
		if got.Outcome != tc.want {
			t.Errorf("%s: %s (%s), want %s", tc.name, got.Outcome, got.Detail, tc.want)
		}
		if got.Outcome == Inconclusive && !strings.Contains(got.Detail, tc.p.Needs) {
			t.Errorf("%s: the detail %q does not say what the probe needs", tc.name, got.Detail)
		}
	}
}

func TestWorst(t *testing.T) {
	rs := func(o ...string) []Result {
		var out []Result
		for _, x := range o {
			out = append(out, Result{Outcome: x})
		}
		return out
	}
	for _, tc := range []struct {
		in   []Result
		want string
	}{
		{nil, ""},
		{rs(Survived, Survived), Survived},
		{rs(Survived, Inconclusive), Inconclusive},
		{rs(Inconclusive, Found, Survived), Found},
		{rs(Failed, Inconclusive), Failed},
	} {
		if got := Worst(tc.in); got != tc.want {
			t.Errorf("Worst(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestWriteJUnit: one test case per probe; found and failed are failures,
// inconclusive is skipped, survived passes.
func TestWriteJUnit(t *testing.T) {
	all := All()
	rs := []Result{
		{Probe: all[0], Outcome: Found, Detail: "client.last-event-id: no id"},
		{Probe: all[1], Outcome: Survived},
		{Probe: all[2], Outcome: Inconclusive, Detail: "the trigger was not met"},
		{Probe: all[3], Outcome: Failed, Detail: "the client command failed"},
	}
	var b strings.Builder
	if err := WriteJUnit(&b, rs); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests    int               `xml:"tests,attr"`
		Failures int               `xml:"failures,attr"`
		Skipped  int               `xml:"skipped,attr"`
		Suite    report.JUnitSuite `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if doc.Tests != 4 || doc.Failures != 2 || doc.Skipped != 1 || len(doc.Suite.Cases) != 4 {
		t.Fatalf("tests %d, failures %d, skipped %d, cases %d\n%s", doc.Tests, doc.Failures, doc.Skipped, len(doc.Suite.Cases), b.String())
	}
	c := doc.Suite.Cases
	if c[0].Name != all[0].Name || c[0].Failure == nil || !strings.Contains(c[0].Failure.Body, all[0].Issue) {
		t.Errorf("found case %+v", c[0])
	}
	if c[1].Failure != nil || c[1].Skipped != nil || c[2].Skipped == nil || c[3].Failure == nil {
		t.Errorf("cases %+v", c)
	}
}

// excusedToo adds an excused case to every check of r.
func excusedToo(r report.Report) report.Report {
	for i := range r.Checks {
		r.Checks[i].Excused = []report.Excuse{{Reason: "the resumption was cut before its replay ended", Count: 1}}
	}
	return r
}

// TestTimeoutsFitAJob: every probe bounds its client's run, and the bounds
// of one end's probes add up to at most four minutes, so that `fray run
// --probe client` (or server) ends within five even when the peer hangs on
// every probe, fray's settling and the servers' starts included.
func TestTimeoutsFitAJob(t *testing.T) {
	const most = 4 * time.Minute
	sum := map[string]time.Duration{}
	for _, p := range All() {
		d := p.ClientTimeout()
		if d <= 0 {
			t.Errorf("%s: timeout %v, want a positive bound", p.Name, d)
		}
		sum[p.End] += d
	}
	for end, d := range sum {
		if d > most {
			t.Errorf("the %s probes' timeouts add up to %v, more than %v", end, d, most)
		}
	}
}

// TestClientTimeoutDefault: a probe without a Timeout of its own takes
// DefaultTimeout; one with its own keeps it.
func TestClientTimeoutDefault(t *testing.T) {
	if got := (Probe{Name: "p"}).ClientTimeout(); got != DefaultTimeout {
		t.Errorf("no Timeout: %v, want %v", got, DefaultTimeout)
	}
	if got := (Probe{Name: "p", Timeout: 3 * time.Second}).ClientTimeout(); got != 3*time.Second {
		t.Errorf("Timeout 3s: %v, want 3s", got)
	}
}
