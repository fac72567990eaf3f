package sweep

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/frayproxy/fray/proxy/report"
)

// Result is the run of one cell.
type Result struct {
	Cell    Cell
	Outcome Outcome
	// Profile, Trace and Timeline are the files written for the cell, ""
	// when none; Reproduce is the command that runs it again.
	Profile   string
	Trace     string
	Timeline  string
	Reproduce string
}

// Sweep is what a sweep found: a result per cell run, in plan order.
type Sweep struct {
	Results []Result
	// Left is how many cells --max-runs left out.
	Left int
}

// Verdict is the sweep's verdict: fail when a cell failed, inconclusive
// when one was, pass when every cell passed (and at least one ran).
func (s Sweep) Verdict() string {
	v := report.VerdictPass
	if len(s.Results) == 0 {
		v = report.VerdictInconclusive
	}
	for _, r := range s.Results {
		switch r.Outcome.Verdict {
		case report.VerdictFail:
			return report.VerdictFail
		case report.VerdictInconclusive:
			v = report.VerdictInconclusive
		}
	}
	return v
}

// row is the results of one point, a column per mode.
type row struct {
	point Point
	cells [len(modeNames)]*Result
}

func (s Sweep) rows() []row {
	var rows []row
	for i := range s.Results {
		r := &s.Results[i]
		if len(rows) == 0 || rows[len(rows)-1].point != r.Cell.Point {
			rows = append(rows, row{point: r.Cell.Point})
		}
		rows[len(rows)-1].cells[r.Cell.Mode] = r
	}
	return rows
}

// WriteMatrix writes the matrix: a row per point, a column per mode, each
// cell the verdict and the check that decided it ("-": the mode cannot act
// there, or --max-runs left it out); then a line per failing cell with the
// command that reproduces it.
func (s Sweep) WriteMatrix(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(append([]string{"POINT"}, modeNames[:]...), "\t"))
	for _, r := range s.rows() {
		line := []string{r.point.String()}
		for _, c := range r.cells {
			cell := "-"
			if c != nil {
				cell = c.Outcome.Short()
			}
			line = append(line, cell)
		}
		fmt.Fprintln(tw, strings.Join(line, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if s.Left > 0 {
		fmt.Fprintf(w, "%d more cells left out by --max-runs\n", s.Left)
	}
	for _, r := range s.Results {
		if r.Outcome.IsFail() && r.Reproduce != "" {
			fmt.Fprintf(w, "reproduce %s: %s\n", r.Cell, r.Reproduce)
		}
	}
	return nil
}

// jsonCell is a cell in the JSON report.
type jsonCell struct {
	Stream    string `json:"stream"`
	Kind      string `json:"kind"`
	Method    string `json:"method,omitempty"`
	Name      string `json:"name,omitempty"`
	Point     string `json:"point"`
	Events    int    `json:"events_before_cut"`
	Mode      string `json:"mode"`
	Outcome          // verdict, check, why
	Profile   string `json:"profile,omitempty"`
	Trace     string `json:"trace,omitempty"`
	Timeline  string `json:"timeline,omitempty"`
	Reproduce string `json:"reproduce,omitempty"`
}

// WriteJSON writes the sweep as JSON: its verdict, its modes, the cells
// left out and every cell run.
func (s Sweep) WriteJSON(w io.Writer) error {
	out := struct {
		Verdict string     `json:"verdict"`
		Modes   []string   `json:"modes"`
		Left    int        `json:"left_out"`
		Cells   []jsonCell `json:"cells"`
	}{Verdict: s.Verdict(), Modes: modeNames[:], Left: s.Left, Cells: []jsonCell{}}
	for _, r := range s.Results {
		p := r.Cell.Point
		out.Cells = append(out.Cells, jsonCell{
			Stream: p.Stream.Label(), Kind: p.Stream.Kind, Method: p.Stream.Method, Name: p.Stream.Name,
			Point: p.Where(), Events: p.N, Mode: r.Cell.Mode.String(), Outcome: r.Outcome,
			Profile: r.Profile, Trace: r.Trace, Timeline: r.Timeline, Reproduce: r.Reproduce,
		})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// WriteJUnit writes JUnit XML: a test case per cell run, failed when the
// cell failed (its message the check that decided it) and skipped when it
// was inconclusive.
func (s Sweep) WriteJUnit(w io.Writer) error {
	suite := report.JUnitSuite{Name: "fray sweep", Time: "0"}
	for _, r := range s.Results {
		c := report.JUnitCase{Classname: "fray.sweep." + r.Cell.Point.Stream.Label(), Name: r.Cell.Point.Where() + ", " + r.Cell.Mode.String(), Time: "0"}
		switch o := r.Outcome; o.Verdict {
		case report.VerdictFail:
			c.Failure = report.JUnitFail(o.Short(), "fail", strings.TrimSpace(o.Why+"\n"+r.Reproduce))
		case report.VerdictInconclusive:
			c.Skipped = &report.JUnitSkipped{Message: "inconclusive: " + o.Why}
		}
		suite.Cases = append(suite.Cases, c)
	}
	if err := report.WriteJUnitSuite(w, suite); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	return nil
}
