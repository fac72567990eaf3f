package report_test

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/report"
)

// What JUnit consumers read, declared independently of the writer.
type xSuites struct {
	XMLName xml.Name `xml:"testsuites"`
	Tests   int      `xml:"tests,attr"`
	Suites  []xSuite `xml:"testsuite"`
}

type xSuite struct {
	Name     string  `xml:"name,attr"`
	Tests    int     `xml:"tests,attr"`
	Failures int     `xml:"failures,attr"`
	Errors   int     `xml:"errors,attr"`
	Skipped  int     `xml:"skipped,attr"`
	Time     string  `xml:"time,attr"`
	Cases    []xCase `xml:"testcase"`
	Props    []struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	} `xml:"properties>property"`
}

type xCase struct {
	Classname string `xml:"classname,attr"`
	Name      string `xml:"name,attr"`
	Failure   *struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Body    string `xml:",chardata"`
	} `xml:"failure"`
	Skipped *struct {
		Message string `xml:"message,attr"`
	} `xml:"skipped"`
	SystemOut string `xml:"system-out"`
}

// writeJUnit writes r as JUnit and reads it back as a consumer would.
func writeJUnit(t *testing.T, r report.Report) ([]byte, xSuites) {
	t.Helper()
	var buf bytes.Buffer
	if err := report.WriteJUnit(&buf, r); err != nil {
		t.Fatal(err)
	}
	var doc xSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("parse: %v\n%s", err, buf.String())
	}
	return buf.Bytes(), doc
}

func TestJUnitStructure(t *testing.T) {
	out, doc := writeJUnit(t, sample())
	golden(t, "sample.junit.xml", out)
	if !bytes.HasPrefix(out, []byte("<?xml ")) {
		t.Errorf("no XML declaration:\n%s", out)
	}
	if len(doc.Suites) != 1 {
		t.Fatalf("%d testsuites, want 1", len(doc.Suites))
	}
	s := doc.Suites[0]
	if s.Name != "fray" || s.Tests != 7 || s.Failures != 2 || s.Skipped != 2 || s.Errors != 0 || s.Time != "3.210" || doc.Tests != 7 {
		t.Errorf("suite %s tests=%d failures=%d skipped=%d errors=%d time=%s (root tests=%d), want fray 7 2 2 0 3.210 (7)",
			s.Name, s.Tests, s.Failures, s.Skipped, s.Errors, s.Time, doc.Tests)
	}
	if len(s.Cases) != len(sample().Checks)+2 {
		t.Fatalf("%d testcases, want one per check (%d) and two for the run", len(s.Cases), len(sample().Checks))
	}
	// The failed command fails a case of its own: a CI test tab is not
	// green over a client that failed.
	cmd, evid := s.Cases[len(s.Cases)-2], s.Cases[len(s.Cases)-1]
	if cmd.Classname != "fray.run" || cmd.Name != "command" || cmd.Failure == nil || !strings.Contains(cmd.Failure.Message, "exit status 1") {
		t.Errorf("command case %+v", cmd)
	}
	if evid.Name != "evidence" || evid.Failure != nil || evid.Skipped != nil {
		t.Errorf("evidence case %+v of a run that was not inconclusive", evid)
	}
	for i, c := range sample().Checks {
		tc := s.Cases[i]
		wantClass := "fray." + strings.SplitN(c.ID, ".", 2)[0]
		if tc.Name != c.ID || tc.Classname != wantClass {
			t.Errorf("testcase %d: classname=%q name=%q, want %q %q", i, tc.Classname, tc.Name, wantClass, c.ID)
		}
		switch c.Status {
		case report.StatusFail:
			if tc.Failure == nil || tc.Skipped != nil {
				t.Fatalf("%s: want a failure element only", c.ID)
			}
			for _, e := range c.Evidence {
				if !strings.Contains(tc.Failure.Body, e.Message) {
					t.Errorf("%s: failure body lacks evidence %q:\n%s", c.ID, e.Message, tc.Failure.Body)
				}
			}
			if !strings.Contains(tc.Failure.Body, "and 1 more") {
				t.Errorf("%s: failure body does not count the findings beyond the evidence:\n%s", c.ID, tc.Failure.Body)
			}
			if tc.Failure.Type != string(checks.Error) || !strings.Contains(tc.Failure.Message, "3 findings") {
				t.Errorf("%s: failure type=%q message=%q", c.ID, tc.Failure.Type, tc.Failure.Message)
			}
		case report.StatusSkip:
			if tc.Skipped == nil || tc.Failure != nil {
				t.Errorf("%s: want a skipped element only", c.ID)
			}
		case report.StatusWarn:
			if tc.Failure != nil || tc.Skipped != nil {
				t.Errorf("%s: a warning must pass", c.ID)
			}
			if !strings.Contains(tc.SystemOut, "warning") || !strings.Contains(tc.SystemOut, c.Evidence[0].Message) {
				t.Errorf("%s: system-out %q does not note the warning and its evidence", c.ID, tc.SystemOut)
			}
		case report.StatusPass:
			if tc.Failure != nil || tc.Skipped != nil || tc.SystemOut != "" {
				t.Errorf("%s: a pass has no failure, skipped or output", c.ID)
			}
		}
	}
	props := map[string]string{}
	for _, p := range s.Props {
		props[p.Name] = p.Value
	}
	if props["verdict"] != "fail" || props["profile"] != "polling-server" || props["seed"] != "1" {
		t.Errorf("properties %v", props)
	}
}

// TestJUnitEscapes: evidence is peer-controlled text; it must not break
// the XML.
func TestJUnitEscapes(t *testing.T) {
	r := report.Report{Schema: 1, Verdict: report.VerdictFail, Checks: []report.Check{{
		ID: "server.x", Severity: checks.Error, Status: report.StatusFail, Count: 1,
		Evidence: []report.Evidence{{Message: "id \"]]></failure><x>\" & <y> \x00\x1b\xff"}},
	}}}
	_, doc := writeJUnit(t, r)
	if body := doc.Suites[0].Cases[0].Failure.Body; !strings.Contains(body, "id \"]]></failure><x>\" & <y> \uFFFD\uFFFD\uFFFD") {
		t.Errorf("body %q", body)
	}
}

func TestJUnitNoChecks(t *testing.T) {
	_, doc := writeJUnit(t, report.Report{Schema: 1, Verdict: report.VerdictPass})
	if len(doc.Suites) != 1 || doc.Suites[0].Name != "fray" || doc.Suites[0].Tests != 1 {
		t.Errorf("got %+v", doc)
	}
}

// TestJUnitInconclusive: an inconclusive run fails its evidence case,
// unless the user accepted it, when the case is skipped.
func TestJUnitInconclusive(t *testing.T) {
	for _, accepted := range []bool{false, true} {
		_, doc := writeJUnit(t, report.Report{Schema: 1, Verdict: report.VerdictInconclusive, Why: "no fault fired", Accepted: accepted})
		s := doc.Suites[0]
		tc := s.Cases[0]
		switch {
		case !accepted && (tc.Failure == nil || s.Failures != 1 || !strings.Contains(tc.Failure.Message, "no fault fired")):
			t.Errorf("inconclusive: %+v", s)
		case accepted && (tc.Skipped == nil || s.Skipped != 1 || s.Failures != 0):
			t.Errorf("accepted: %+v", s)
		}
	}
}

// TestJUnitInterrupted: a run a signal stopped is never green in JUnit,
// even when nothing failed up to the signal.
func TestJUnitInterrupted(t *testing.T) {
	r := report.Report{Schema: 1, Verdict: report.VerdictPass}
	r.Interrupt()
	_, doc := writeJUnit(t, r)
	s := doc.Suites[0]
	if s.Failures != 1 || s.Cases[0].Failure == nil || !strings.Contains(s.Cases[0].Failure.Message, "interrupted: a signal stopped the run") {
		t.Errorf("interrupted run in JUnit: %+v", s)
	}
}
