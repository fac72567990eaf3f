package probes

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// JUnit XML for a set of probe results, in the shape CI systems read: a
// <testsuites> root holding one <testsuite name="fray probes">, one
// <testcase> per probe. A probe that found its bug or failed is a
// failure, an inconclusive one is skipped (its trigger was not met, so it
// says nothing), a survivor passes.
type junitSuites struct {
	XMLName  xml.Name   `xml:"testsuites"`
	Name     string     `xml:"name,attr"`
	Tests    int        `xml:"tests,attr"`
	Failures int        `xml:"failures,attr"`
	Skipped  int        `xml:"skipped,attr"`
	Suite    junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Classname string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// WriteJUnit writes rs as JUnit XML to w.
func WriteJUnit(w io.Writer, rs []Result) error {
	s := junitSuite{Name: "fray probes", Tests: len(rs)}
	for _, r := range rs {
		p := r.Probe
		c := junitCase{Classname: "fray.probe." + p.End, Name: p.Name,
			SystemOut: fmt.Sprintf("%s: %s\nreport: %s\nfinding: %s\ntriggered: %v", r.Outcome, r.Detail, p.Issue, p.Finding, r.Triggered)}
		switch r.Outcome {
		case Found, Failed:
			s.Failures++
			c.Failure = &junitFailure{Message: r.Detail, Type: r.Outcome,
				Body: strings.Join([]string{p.Bug, "report: " + p.Issue}, "\n")}
		case Inconclusive:
			s.Skipped++
			c.Skipped = &junitSkipped{Message: r.Detail}
		}
		s.Cases = append(s.Cases, c)
	}
	doc := junitSuites{Name: "fray", Tests: s.Tests, Failures: s.Failures, Skipped: s.Skipped, Suite: s}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("probes: junit: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("probes: junit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}
