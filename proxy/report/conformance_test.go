package report_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/report"
)

// at is the moment the checks.json of the tests is written.
var at = time.Date(2026, 1, 2, 3, 4, 5, 678e6, time.UTC)

// baselined is sample() judged against a baseline that lists the failing
// check and one that passed.
func baselined() report.Report {
	r := sample()
	r.ApplyBaseline("fray-baseline.yml", []report.BaselineEntry{
		{Check: "client.retry-honoured", Line: 2, Reason: "the SDK reconnects at once"},
		{Profile: "polling-server", Check: "client.last-event-id", Line: 3},
	})
	return r
}

func TestChecksJSONGolden(t *testing.T) {
	for name, r := range map[string]report.Report{"sample.checks.json": sample(), "sample.baselined.checks.json": baselined()} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := report.WriteChecksJSON(&buf, r, at); err != nil {
				t.Fatal(err)
			}
			golden(t, name, buf.Bytes())
		})
	}
}

// entryOf returns the entry id of cs, the zero entry when absent.
func entryOf(cs []report.ConformanceCheck, id string) report.ConformanceCheck {
	for _, c := range cs {
		if c.ID == id {
			return c
		}
	}
	return report.ConformanceCheck{}
}

// TestConformanceStatuses: how each fray outcome maps to the suite's
// statuses.
func TestConformanceStatuses(t *testing.T) {
	cs := report.ConformanceChecks(sample(), at)
	for id, want := range map[string]string{
		"client.retry-honoured":      report.ConformanceFailure, // fail
		"server.priming-event":       report.ConformanceWarning, // warn
		"client.last-event-id":       report.ConformanceSuccess, // pass
		"server.replay-complete":     report.ConformanceSkipped, // off
		"e2e.every-request-answered": report.ConformanceSkipped, // did not apply
		report.RunCommandID:          report.ConformanceFailure, // the command failed
		report.RunEvidenceID:         report.ConformanceSuccess, // saw enough
		report.RunBaselineID:         "",                        // no baseline
	} {
		if got := entryOf(cs, id).Status; got != want {
			t.Errorf("%s: %q, want %q", id, got, want)
		}
	}
	if len(cs) != len(sample().Checks)+2 {
		t.Errorf("%d entries, want one per check and two for the run", len(cs))
	}

	// expect fails the test unless the entry id of r's checks.json has
	// status; what says which run r is.
	expect := func(what string, r report.Report, id, status string) {
		t.Helper()
		if got := entryOf(report.ConformanceChecks(r, at), id).Status; got != status {
			t.Errorf("%s: %s is %q, want %q", what, id, got, status)
		}
	}
	expect("a baselined failure, still", baselined(), "client.retry-honoured", report.ConformanceFailure)
	expect("a baseline with a fixed entry", baselined(), report.RunBaselineID, report.ConformanceFailure)
	fixed := entryOf(report.ConformanceChecks(baselined(), at), report.RunBaselineID)
	if !strings.Contains(fixed.ErrorMessage, "polling-server:client.last-event-id (line 3") {
		t.Errorf("the fixed entry is not named: %q", fixed.ErrorMessage)
	}

	short := report.Report{Schema: 1, Profile: "p"}
	short.Conclude("no fault fired")
	expect("inconclusive", short, report.RunEvidenceID, report.ConformanceFailure)
	short.Accepted = true
	expect("inconclusive, accepted", short, report.RunEvidenceID, report.ConformanceInfo)
	short.ApplyBaseline("b.yml", nil)
	expect("a baseline with nothing fixed", short, report.RunBaselineID, report.ConformanceSuccess)
	expect("a baseline, for the evidence entry", short, report.RunEvidenceID, report.ConformanceInfo)
}

// suiteType is what the suite's published types say of checks.json.
type suiteType struct {
	statuses []string
	check    map[string]tsField // ConformanceCheck's fields
	specRef  map[string]tsField // SpecReference's fields
}

type tsField struct {
	typ      string
	optional bool
}

// readSuiteType reads testdata/conformance-types.ts, the suite's own
// declaration of checks.json's elements.
func readSuiteType(t *testing.T) suiteType {
	t.Helper()
	src := readFile(t, filepath.Join("testdata", "conformance-types.ts"))
	text := string(src)
	var st suiteType
	union := regexp.MustCompile(`(?s)export type CheckStatus =(.*?);`).FindStringSubmatch(text)
	if union == nil {
		t.Fatal("no CheckStatus in conformance-types.ts")
	}
	for _, m := range regexp.MustCompile(`'([A-Z]+)'`).FindAllStringSubmatch(union[1], -1) {
		st.statuses = append(st.statuses, m[1])
	}
	iface := func(name string) map[string]tsField {
		body := regexp.MustCompile(`(?s)export interface ` + name + ` \{(.*?)\n\}`).FindStringSubmatch(text)
		if body == nil {
			t.Fatalf("no interface %s in conformance-types.ts", name)
		}
		fields := map[string]tsField{}
		for _, m := range regexp.MustCompile(`(?m)^\s*(\w+)(\??): (.+);$`).FindAllStringSubmatch(body[1], -1) {
			fields[m[1]] = tsField{typ: m[3], optional: m[2] == "?"}
		}
		return fields
	}
	st.check, st.specRef = iface("ConformanceCheck"), iface("SpecReference")
	if len(st.statuses) < 4 || len(st.check) < 5 || len(st.specRef) < 1 {
		t.Fatalf("conformance-types.ts read badly: %+v", st)
	}
	return st
}

// validate reports how obj breaks the interface fields.
func validate(t *testing.T, where string, obj map[string]any, fields map[string]tsField, st suiteType) {
	t.Helper()
	for name, f := range fields {
		v, ok := obj[name]
		if !ok {
			if !f.optional {
				t.Errorf("%s: no %s, which the suite requires", where, name)
			}
			continue
		}
		switch f.typ {
		case "string":
			if _, ok := v.(string); !ok {
				t.Errorf("%s: %s is %T, want a string", where, name, v)
			}
		case "string[]":
			if a, ok := v.([]any); !ok || slices.ContainsFunc(a, func(x any) bool { _, s := x.(string); return !s }) {
				t.Errorf("%s: %s is not a string[]", where, name)
			}
		case "Record<string, unknown>":
			if _, ok := v.(map[string]any); !ok {
				t.Errorf("%s: %s is %T, want an object", where, name, v)
			}
		case "CheckStatus":
			if s, _ := v.(string); !slices.Contains(st.statuses, s) {
				t.Errorf("%s: status %v is not one of %v", where, v, st.statuses)
			}
		case "SpecReference[]":
			a, ok := v.([]any)
			if !ok {
				t.Errorf("%s: %s is %T, want an array", where, name, v)
			}
			for i, x := range a {
				ref, ok := x.(map[string]any)
				if !ok {
					t.Errorf("%s: %s[%d] is %T, want an object", where, name, i, x)
					continue
				}
				validate(t, where+"."+name, ref, st.specRef, st)
			}
		default:
			t.Errorf("%s: the suite's field %s has type %s, which this test does not know", where, name, f.typ)
		}
	}
	for name := range obj {
		if _, ok := fields[name]; !ok {
			t.Errorf("%s: field %s is not in the suite's type", where, name)
		}
	}
}

// TestChecksJSONSchema: every checks.json fray writes is an array of the
// suite's ConformanceCheck, as its published types declare it: the
// required fields, of their types, no other field, a status the suite
// knows, and an ISO 8601 timestamp as new Date().toISOString() writes it.
func TestChecksJSONSchema(t *testing.T) {
	st := readSuiteType(t)
	short := report.Report{Schema: 1}
	short.Conclude("no exchange went through fray")
	for name, r := range map[string]report.Report{"sample": sample(), "baselined": baselined(), "empty": {}, "inconclusive": short} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := report.WriteChecksJSON(&buf, r, at); err != nil {
				t.Fatal(err)
			}
			var arr []map[string]any
			if err := json.Unmarshal(buf.Bytes(), &arr); err != nil {
				t.Fatalf("not an array of objects: %v\n%s", err, buf.Bytes())
			}
			if len(arr) == 0 {
				t.Fatal("no entries")
			}
			for i, obj := range arr {
				validate(t, "entry "+obj["id"].(string), obj, st.check, st)
				if ts, _ := obj["timestamp"].(string); ts != "2026-01-02T03:04:05.678Z" {
					t.Errorf("entry %d: timestamp %q, want toISOString's form", i, ts)
				}
			}
		})
	}
}

// TestPinnedSuiteTypesVersion: the copy of the suite's types in testdata
// is of the version examples/node installs, so that a newer suite makes
// this test fail until the copy is read again.
func TestPinnedSuiteTypesVersion(t *testing.T) {
	types := readFile(t, filepath.Join("testdata", "conformance-types.ts"))
	lock := readFile(t, filepath.Join("..", "..", "examples", "node", "package-lock.json"))
	var l struct {
		Packages map[string]struct{ Version string } `json:"packages"`
	}
	if err := json.Unmarshal(lock, &l); err != nil {
		t.Fatal(err)
	}
	v := l.Packages["node_modules/@modelcontextprotocol/conformance"].Version
	if v == "" || !strings.Contains(string(types), "@modelcontextprotocol/conformance "+v+" ") {
		t.Errorf("examples/node installs @modelcontextprotocol/conformance %q; testdata/conformance-types.ts is not of that version", v)
	}
}

// TestSummaryWithBaseline: the summary says the baselined verdict and
// what became of each entry, under the run's own verdict.
func TestSummaryWithBaseline(t *testing.T) {
	out := summary(t, baselined(), report.SummaryOptions{})
	golden(t, "sample.baselined.summary.txt", []byte(out))
	for _, want := range []string{
		"fray: verdict FAIL (",
		"  with baseline fray-baseline.yml: verdict FAIL\n    why: fixed, remove from fray-baseline.yml: polling-server:client.last-event-id (line 3)",
		"    expected (still failing): client.retry-honoured (line 2: the SDK reconnects at once)\n",
		"    fixed (remove these entries): polling-server:client.last-event-id (line 3)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if out := summary(t, sample(), report.SummaryOptions{}); strings.Contains(out, "baseline") {
		t.Errorf("a summary without a baseline speaks of one:\n%s", out)
	}
}

// TestJUnitWithBaseline: a failure the baseline lists is skipped, saying
// so, and "fray.run baseline" fails while an entry is fixed.
func TestJUnitWithBaseline(t *testing.T) {
	b, _ := writeJUnit(t, baselined())
	golden(t, "sample.baselined.junit.xml", b)
	out := string(b)
	for _, want := range []string{
		`<skipped message="expected failure, listed in fray-baseline.yml: client.retry-honoured (line 2: the SDK reconnects at once); 3 findings, the first at 1.204s`,
		`<testcase classname="fray.run" name="baseline" time="0">`,
		`<failure message="fixed: polling-server:client.last-event-id (line 3) passed; remove it from fray-baseline.yml" type="baseline">`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("JUnit lacks %q:\n%s", want, out)
		}
	}
	// Failed: the command and the fixed entry; the listed check is skipped.
	if !strings.Contains(out, `<testsuite name="fray" tests="8" failures="2" errors="0" skipped="3"`) {
		t.Errorf("counts:\n%s", out)
	}
}

// TestReportsDocShowsTheBaselinedSummary: the lines docs/reports.md shows
// of a summary with a baseline are the summary's own, in its order.
func TestReportsDocShowsTheBaselinedSummary(t *testing.T) {
	doc := readFile(t, filepath.Join("..", "..", "docs", "reports.md"))
	m := regexp.MustCompile("(?s)```\n(fray: verdict FAIL[^`]*?with baseline[^`]*?)```\n").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/reports.md shows no summary with a baseline")
	}
	r := sample()
	r.Command = nil
	r.Checks = r.Checks[:1]
	r.Conclude("")
	r.ApplyBaseline("fray-baseline.yml", []report.BaselineEntry{{Check: "client.retry-honoured", Line: 2, Reason: "the SDK reconnects at once"}})
	if out := summary(t, r, report.SummaryOptions{}); !strings.HasPrefix(out, string(m[1])) {
		t.Errorf("docs/reports.md shows:\n%s\nthe summary begins:\n%s", m[1], out)
	}
}

// TestExcusedCasesInChecksJSON: a check that passed with cases excused
// (faults fray injected, cases it cannot judge) is a SUCCESS whose details
// count them by reason.
func TestExcusedCasesInChecksJSON(t *testing.T) {
	r := report.Report{Schema: 1, Checks: []report.Check{{ID: "client.backoff", Severity: "warning", Status: report.StatusPass, Applied: 3,
		Excused: []report.Excuse{{Reason: "the reconnection followed a fault fray injected", Count: 2}}}}}
	r.Conclude("")
	cs := report.ConformanceChecks(r, at)
	if cs[0].Status != report.ConformanceSuccess || cs[0].ErrorMessage != "" {
		t.Fatalf("%+v", cs[0])
	}
	ex, ok := cs[0].Details["excused"].([]report.Excuse)
	if !ok || len(ex) != 1 || ex[0].Count != 2 {
		t.Errorf("details.excused %#v", cs[0].Details["excused"])
	}
}

// TestChecksJSONInterrupted: checks.json's evidence entry fails for a run
// a signal stopped.
func TestChecksJSONInterrupted(t *testing.T) {
	r := report.Report{Schema: 1, Verdict: report.VerdictPass}
	r.Interrupt()
	cc := entryOf(report.ConformanceChecks(r, time.Unix(0, 0)), report.RunEvidenceID)
	if cc.ID == "" {
		t.Fatal("no evidence entry")
	}
	if cc.Status != report.ConformanceFailure || !strings.HasPrefix(cc.ErrorMessage, "interrupted: ") {
		t.Errorf("evidence entry %+v, want a failure saying interrupted", cc)
	}
}

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
