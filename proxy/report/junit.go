package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/frayproxy/fray/proxy/checks"
)

// JUnitSuite is a JUnit XML document, in the shape CI systems read
// (Jenkins, GitLab, GitHub actions that publish test results): a
// <testsuites> root holding this one <testsuite>. fray run's report, fray
// sweep and fray probes all write theirs with WriteJUnitSuite, which
// counts the cases.
type JUnitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Properties []JUnitProperty `xml:"properties>property,omitempty"`
	Cases      []JUnitCase     `xml:"testcase"`
}

// JUnitProperty is a name and a value of a suite.
type JUnitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// JUnitCase is one test case: passed, failed (Failure) or skipped
// (Skipped); SystemOut, when set, says more.
type JUnitCase struct {
	Classname string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *JUnitFailure `xml:"failure,omitempty"`
	Skipped   *JUnitSkipped `xml:"skipped,omitempty"`
	SystemOut *JUnitText    `xml:"system-out,omitempty"`
}

// JUnitFailure is why a case failed; Body is written as given, CDATA.
type JUnitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",cdata"`
}

// JUnitText is a case's output, CDATA.
type JUnitText struct {
	Text string `xml:",cdata"`
}

// JUnitSkipped is why a case was skipped.
type JUnitSkipped struct {
	Message string `xml:"message,attr,omitempty"`
}

// JUnitOut is a case's output made safe for XML.
func JUnitOut(text string) *JUnitText { return &JUnitText{xmlSafe(text)} }

// JUnitFail is a case's failure, its body made safe for XML.
func JUnitFail(message, typ, body string) *JUnitFailure {
	return &JUnitFailure{Message: message, Type: typ, Body: xmlSafe(body)}
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []JUnitSuite `xml:"testsuite"`
}

// WriteJUnitSuite counts s's cases (tests, failures, skipped), writes s
// as JUnit XML to w, and reports the first write error.
func WriteJUnitSuite(w io.Writer, s JUnitSuite) error {
	s.Tests, s.Failures, s.Skipped = len(s.Cases), 0, 0
	for _, tc := range s.Cases {
		switch {
		case tc.Failure != nil:
			s.Failures++
		case tc.Skipped != nil:
			s.Skipped++
		}
	}
	doc := junitSuites{Name: "fray", Tests: s.Tests, Failures: s.Failures, Skipped: s.Skipped, Time: s.Time, Suites: []JUnitSuite{s}}
	ew := &errWriter{w: w}
	io.WriteString(ew, xml.Header)
	enc := xml.NewEncoder(ew)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("write JUnit: %w", err)
	}
	io.WriteString(ew, "\n")
	if ew.err != nil {
		return fmt.Errorf("write JUnit: %w", ew.err)
	}
	return nil
}

// WriteJUnit writes r as JUnit XML: one <testsuite name="fray"> with one
// <testcase classname="fray.PREFIX" name="CHECK-ID"> per check, PREFIX
// being the check id up to its first dot ("client", "server"). A failed
// check has a <failure> whose body lists its evidence; a skipped one a
// <skipped>; a warning passes, with <system-out> saying what was found.
// After the checks, cases stand for the run itself, so that a CI test tab is never green
// over a run that failed: "fray.run command", failed when the command fray
// run wrapped failed (present only with a command), and "fray.run
// evidence", failed when the verdict is inconclusive (skipped when the
// user accepted that), its <system-out> the coverage line. With a baseline, a failed check it lists is
// skipped, its message saying so, and "fray.run baseline" fails while an
// entry is fixed (baselineCase). The suite's tests, failures and skipped attributes
// count them.
func WriteJUnit(w io.Writer, r Report) error {
	secs := strconv.FormatFloat(float64(r.DurationMS)/1000, 'f', 3, 64)
	s := JUnitSuite{Name: "fray", Time: secs, Properties: junitProperties(r)}
	for _, c := range r.Checks {
		tc := JUnitCase{Classname: junitClass(c.ID), Name: c.ID, Time: "0"}
		e, state := r.Baseline.Find(c.ID)
		switch {
		case c.Status == StatusFail && state == "expected":
			tc.Skipped = &JUnitSkipped{Message: expectedMessage(c, e, r.Baseline.File)}
		case c.Status == StatusFail:
			tc.Failure = JUnitFail(fmt.Sprintf("%s: %s", c.ID, plural(c.Count, "finding")), string(c.Severity), evidenceText(c))
		case c.Status == StatusSkip:
			tc.Skipped = &JUnitSkipped{Message: skipMessage(c)}
		case c.Status == StatusWarn:
			tc.SystemOut = JUnitOut(fmt.Sprintf("warning: %s (severity %s; the check passes)\n%s",
				plural(c.Count, "finding"), c.Severity, evidenceText(c)))
		}
		s.Cases = append(s.Cases, tc)
	}
	s.Cases = append(s.Cases, runCases(r)...)
	if err := WriteJUnitSuite(w, s); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// runCases are the test cases of the run as a whole: its command and its
// evidence.
func runCases(r Report) []JUnitCase {
	var out []JUnitCase
	if r.Command != nil {
		tc := JUnitCase{Classname: "fray.run", Name: "command", Time: "0"}
		if r.Command.Failed() {
			tc.Failure = JUnitFail("the client command failed: "+r.Command.describe(), "command",
				fmt.Sprintf("%s\n%s\n", strings.Join(r.Command.Args, " "), r.Command.describe()))
		}
		out = append(out, tc)
	}
	tc := JUnitCase{Classname: "fray.run", Name: "evidence", Time: "0"}
	// A baseline can leave a failed run inconclusive: what it did not
	// see is then in ShortOf, not Why.
	if r.Verdict == VerdictInterrupted {
		tc.Failure = JUnitFail("interrupted: "+r.Why, "interrupted", r.Why+"\n")
	} else if verdict, _, _ := r.Outcome(); verdict == VerdictInconclusive || r.Verdict == VerdictInconclusive {
		short := r.ShortOf()
		if r.Accepted {
			tc.Skipped = &JUnitSkipped{Message: "inconclusive, accepted: " + short}
		} else {
			tc.Failure = JUnitFail("inconclusive: "+short, "inconclusive", short+"\n")
		}
	}
	if r.Coverage != nil {
		// What the run exercised, beside the evidence it rests on.
		tc.SystemOut = JUnitOut(r.Coverage.Line() + "\n")
	}
	out = append(out, tc)
	if b := r.Baseline; b != nil {
		out = append(out, baselineCase(b))
	}
	return out
}

// junitClass is "fray." and the check id up to its first dot.
func junitClass(id string) string {
	prefix, _, ok := strings.Cut(id, ".")
	if !ok || prefix == "" {
		return "fray"
	}
	return "fray." + prefix
}

func junitProperties(r Report) []JUnitProperty {
	props := []JUnitProperty{{"verdict", r.Verdict}, {"schema", strconv.Itoa(r.Schema)}}
	if r.Why != "" {
		props = append(props, JUnitProperty{"why", r.Why})
	}
	if r.Profile != "" {
		props = append(props, JUnitProperty{"profile", r.Profile}, JUnitProperty{"seed", strconv.FormatUint(r.Seed, 10)})
	}
	if r.Coverage != nil {
		props = append(props, JUnitProperty{"exercised", strings.TrimPrefix(r.Coverage.Line(), "exercised: ")})
	}
	if r.Command != nil {
		props = append(props, JUnitProperty{"command", strings.Join(r.Command.Args, " ")},
			JUnitProperty{"command.exit_code", strconv.Itoa(r.Command.ExitCode)})
	}
	return props
}

func skipMessage(c Check) string {
	if c.Severity == checks.Off {
		return "switched off by the profile"
	}
	return "nothing this check looks at happened"
}

// evidenceText lists a check's evidence, one line each, and says how many
// findings were counted beyond it.
func evidenceText(c Check) string {
	var b strings.Builder
	if c.Summary != "" {
		b.WriteString(c.Summary)
		b.WriteByte('\n')
	}
	for _, e := range c.Evidence {
		b.WriteString(FormatEvidence(e))
		b.WriteByte('\n')
	}
	if more := c.Count - len(c.Evidence); more > 0 {
		fmt.Fprintf(&b, "... and %d more\n", more)
	}
	return b.String()
}

// xmlSafe replaces the characters XML 1.0 cannot carry at all (most
// control characters, invalid UTF-8), which evidence quoting a peer's bytes
// may hold, with U+FFFD. CDATA sections escape nothing else. A string
// with none is returned as it is: ToValidUTF8 and Map copy only what they
// change.
func xmlSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' || (r >= 0x20 && r <= 0xD7FF) ||
			(r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF) {
			return r
		}
		return utf8.RuneError
	}, strings.ToValidUTF8(s, string(utf8.RuneError)))
}
