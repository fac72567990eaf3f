package sweep

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"regexp"
	"strings"
	"testing"

	"github.com/frayproxy/fray/proxy/report"
)

func TestDecide(t *testing.T) {
	failed := report.Check{ID: "client.last-event-id", Status: report.StatusFail, Evidence: []report.Evidence{{Message: "no Last-Event-ID"}}}
	warned := report.Check{ID: "server.retry", Status: report.StatusWarn}
	for _, tt := range []struct {
		name string
		r    report.Report
		want Outcome
	}{
		{"pass", report.Report{Verdict: report.VerdictPass, Checks: []report.Check{warned}}, Outcome{Verdict: "pass"}},
		{"the first failed check decides", report.Report{Verdict: report.VerdictFail, Why: "failed: ...", Checks: []report.Check{warned, failed, {ID: "e2e.x", Status: report.StatusFail}}},
			Outcome{Verdict: "fail", Check: "client.last-event-id", Why: "no Last-Event-ID"}},
		{"the client alone", report.Report{Verdict: report.VerdictFail, Why: "the client command failed: exit status 1", Command: &report.Command{ExitCode: 1, Error: "exit status 1"}},
			Outcome{Verdict: "fail", Check: ClientCheck, Why: "the client command failed: exit status 1"}},
		{"the client alone, no reason given", report.Report{Verdict: report.VerdictFail, Command: &report.Command{ExitCode: 1, Error: "exit status 1"}},
			Outcome{Verdict: "fail", Check: ClientCheck, Why: "exit status 1"}},
		{"the client after a cut no pair could recover", report.Report{Verdict: report.VerdictFail,
			Why:      "the client command failed (exit status 1) after 1 cut no conforming pair could recover: exchange 5 ...",
			Command:  &report.Command{ExitCode: 1, Error: "exit status 1"},
			Coverage: &report.Coverage{Cuts: 1, Unrecoverable: 1}},
			Outcome{Verdict: "fail", Check: UnrecoverableCut, Why: "the client command failed (exit status 1) after 1 cut no conforming pair could recover: exchange 5 ..."}},
		{"an end-to-end failure names the cause it cites", report.Report{Verdict: report.VerdictFail, Checks: []report.Check{
			{ID: "client.last-event-id", Status: report.StatusWarn},
			{ID: "client.reconnects", Status: report.StatusPass},
			{ID: "e2e.every-request-answered", Status: report.StatusFail, Evidence: []report.Evidence{{Message: "request 2 got no response: the client reconnected without the Last-Event-ID it held (client.last-event-id); (client.reconnects)"}}},
		}}, Outcome{Verdict: "fail", Check: "client.last-event-id", Failed: "e2e.every-request-answered",
			Why: "request 2 got no response: the client reconnected without the Last-Event-ID it held (client.last-event-id); (client.reconnects)"}},
		{"an end-to-end failure that cites nothing", report.Report{Verdict: report.VerdictFail, Checks: []report.Check{
			{ID: "e2e.every-request-answered", Status: report.StatusFail, Evidence: []report.Evidence{{Message: "the server sent no response"}}},
		}}, Outcome{Verdict: "fail", Check: "e2e.every-request-answered", Why: "the server sent no response"}},
		{"inconclusive", report.Report{Verdict: report.VerdictInconclusive, Why: "no fault fired"}, Outcome{Verdict: "inconclusive", Why: "no fault fired"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Decide(tt.r); got != tt.want {
				t.Errorf("Decide = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// columns splits a line of the matrix: the tabwriter leaves at least two
// spaces between columns, and a cell holds single spaces at most.
var columns = regexp.MustCompile(` {2,}`)

// parsedSweep is a sweep as its three outputs say it: cell name to the
// verdict and check each shows.
type parsedSweep map[string]string

// parseOutputs reads the matrix, the JSON and the JUnit of a sweep back
// into cell -> "verdict check", for a test that holds them to agree.
func parseOutputs(t *testing.T, matrix, js, junit []byte) (fromMatrix, fromJSON, fromJUnit parsedSweep) {
	t.Helper()
	fromMatrix, fromJSON, fromJUnit = parsedSweep{}, parsedSweep{}, parsedSweep{}
	lines := strings.Split(string(matrix), "\n")
	head := columns.Split(lines[0], -1)
	for _, l := range lines[1:] {
		f := columns.Split(l, -1)
		if len(f) != len(head) {
			continue // the lines after the matrix
		}
		for i := 1; i < len(f); i++ {
			if f[i] != "-" {
				fromMatrix[f[0]+", "+head[i]] = f[i]
			}
		}
	}
	var j struct {
		Cells []struct {
			Stream, Point, Mode, Verdict, Check string
		}
	}
	if err := json.Unmarshal(js, &j); err != nil {
		t.Fatal(err)
	}
	for _, c := range j.Cells {
		fromJSON[c.Stream+", "+c.Point+", "+c.Mode] = Outcome{Verdict: c.Verdict, Check: c.Check}.Short()
	}
	var x struct {
		Cases []struct {
			Class   string `xml:"classname,attr"`
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
			} `xml:"failure"`
			Skipped *struct{} `xml:"skipped"`
		} `xml:"testsuite>testcase"`
	}
	if err := xml.Unmarshal(junit, &x); err != nil {
		t.Fatal(err)
	}
	for _, c := range x.Cases {
		v := "pass"
		switch {
		case c.Failure != nil:
			v = c.Failure.Message
		case c.Skipped != nil:
			v = "inconclusive"
		}
		fromJUnit[strings.TrimPrefix(c.Class, "fray.sweep.")+", "+c.Name] = v
	}
	return fromMatrix, fromJSON, fromJUnit
}

func TestOutputsAgree(t *testing.T) {
	cells, _ := Plan([]Stream{call, get}, 2, 9)
	sw := Sweep{Left: 3}
	outcomes := []Outcome{{Verdict: "pass"}, {Verdict: "fail", Check: "client.last-event-id", Why: "x"}, {Verdict: "inconclusive", Why: "y"}, {Verdict: "fail", Check: ClientCheck}}
	for i, c := range cells {
		sw.Results = append(sw.Results, Result{Cell: c, Outcome: outcomes[i%len(outcomes)], Reproduce: "fray run --reproduce x"})
	}
	var m, j, x bytes.Buffer
	if err := sw.WriteMatrix(&m); err != nil {
		t.Fatal(err)
	}
	if err := sw.WriteJSON(&j); err != nil {
		t.Fatal(err)
	}
	if err := sw.WriteJUnit(&x); err != nil {
		t.Fatal(err)
	}
	fm, fj, fx := parseOutputs(t, m.Bytes(), j.Bytes(), x.Bytes())
	if len(fm) != len(cells) || len(fj) != len(cells) || len(fx) != len(cells) {
		t.Fatalf("cells: matrix %d, JSON %d, JUnit %d, want %d\n%s", len(fm), len(fj), len(fx), len(cells), m.String())
	}
	for k, v := range fm {
		if fj[k] != v || fx[k] != v {
			t.Errorf("%s: matrix %q, JSON %q, JUnit %q", k, v, fj[k], fx[k])
		}
	}
	if !strings.Contains(m.String(), "3 more cells left out by --max-runs") || strings.Count(m.String(), "\nreproduce ") != 4 {
		t.Errorf("matrix:\n%s", m.String())
	}
	if sw.Verdict() != "fail" {
		t.Errorf("verdict %s", sw.Verdict())
	}
}
