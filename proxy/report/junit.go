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

// JUnit XML, in the shape CI systems read (Jenkins, GitLab, GitHub
// actions that publish test results): a <testsuites> root holding one
// <testsuite name="fray">, one <testcase> per check.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Classname string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut *junitText    `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",cdata"`
}

type junitText struct {
	Text string `xml:",cdata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr,omitempty"`
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
	s := junitSuite{Name: "fray", Time: secs, Properties: junitProperties(r)}
	for _, c := range r.Checks {
		tc := junitCase{Classname: junitClass(c.ID), Name: c.ID, Time: "0"}
		e, state := r.Baseline.Find(c.ID)
		switch {
		case c.Status == StatusFail && state == "expected":
			tc.Skipped = &junitSkipped{Message: expectedMessage(c, e, r.Baseline.File)}
		case c.Status == StatusFail:
			tc.Failure = &junitFailure{
				Message: fmt.Sprintf("%s: %s", c.ID, plural(c.Count, "finding")),
				Type:    string(c.Severity),
				Body:    xmlSafe(evidenceText(c)),
			}
		case c.Status == StatusSkip:
			tc.Skipped = &junitSkipped{Message: skipMessage(c)}
		case c.Status == StatusWarn:
			tc.SystemOut = &junitText{xmlSafe(fmt.Sprintf("warning: %s (severity %s; the check passes)\n%s",
				plural(c.Count, "finding"), c.Severity, evidenceText(c)))}
		}
		s.Cases = append(s.Cases, tc)
	}
	s.Cases = append(s.Cases, runCases(r)...)
	for _, tc := range s.Cases {
		switch {
		case tc.Failure != nil:
			s.Failures++
		case tc.Skipped != nil:
			s.Skipped++
		}
	}
	s.Tests = len(s.Cases)
	doc := junitSuites{Name: "fray", Tests: s.Tests, Failures: s.Failures, Skipped: s.Skipped, Time: secs, Suites: []junitSuite{s}}
	ew := &errWriter{w: w}
	io.WriteString(ew, xml.Header)
	enc := xml.NewEncoder(ew)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("report: write JUnit: %w", err)
	}
	io.WriteString(ew, "\n")
	if ew.err != nil {
		return fmt.Errorf("report: write JUnit: %w", ew.err)
	}
	return nil
}

// runCases are the test cases of the run as a whole: its command and its
// evidence.
func runCases(r Report) []junitCase {
	var out []junitCase
	if r.Command != nil {
		tc := junitCase{Classname: "fray.run", Name: "command", Time: "0"}
		if r.Command.Failed() {
			tc.Failure = &junitFailure{
				Message: "the client command failed: " + r.Command.describe(),
				Type:    "command",
				Body:    xmlSafe(fmt.Sprintf("%s\n%s\n", strings.Join(r.Command.Args, " "), r.Command.describe())),
			}
		}
		out = append(out, tc)
	}
	tc := junitCase{Classname: "fray.run", Name: "evidence", Time: "0"}
	// A baseline can leave a failed run inconclusive: what it did not
	// see is then in ShortOf, not Why.
	if r.Verdict == VerdictInterrupted {
		tc.Failure = &junitFailure{Message: "interrupted: " + r.Why, Type: "interrupted", Body: xmlSafe(r.Why + "\n")}
	} else if verdict, _, _ := r.Outcome(); verdict == VerdictInconclusive || r.Verdict == VerdictInconclusive {
		short := r.ShortOf()
		if r.Accepted {
			tc.Skipped = &junitSkipped{Message: "inconclusive, accepted: " + short}
		} else {
			tc.Failure = &junitFailure{Message: "inconclusive: " + short, Type: "inconclusive", Body: xmlSafe(short + "\n")}
		}
	}
	if r.Coverage != nil {
		// What the run exercised, beside the evidence it rests on.
		tc.SystemOut = &junitText{xmlSafe(r.Coverage.Line() + "\n")}
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

func junitProperties(r Report) []junitProperty {
	props := []junitProperty{{"verdict", r.Verdict}, {"schema", strconv.Itoa(r.Schema)}}
	if r.Why != "" {
		props = append(props, junitProperty{"why", r.Why})
	}
	if r.Profile != "" {
		props = append(props, junitProperty{"profile", r.Profile}, junitProperty{"seed", strconv.FormatUint(r.Seed, 10)})
	}
	if r.Coverage != nil {
		props = append(props, junitProperty{"exercised", strings.TrimPrefix(r.Coverage.Line(), "exercised: ")})
	}
	if r.Command != nil {
		props = append(props, junitProperty{"command", strings.Join(r.Command.Args, " ")},
			junitProperty{"command.exit_code", strconv.Itoa(r.Command.ExitCode)})
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
// may hold, with U+FFFD. CDATA sections escape nothing else.
func xmlSafe(s string) string {
	ok := func(r rune) bool {
		return r == '\t' || r == '\n' || r == '\r' || (r >= 0x20 && r <= 0xD7FF) ||
			(r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF)
	}
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || !ok(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	return strings.Map(func(r rune) rune {
		if !ok(r) {
			return utf8.RuneError
		}
		return r
	}, strings.ToValidUTF8(s, string(utf8.RuneError)))
}
