package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/profiles/sweep"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
	"github.com/frayproxy/fray/proxy/trace"
)

func sweepCommand() *cli.Command {
	return &cli.Command{
		Name:  "sweep",
		Usage: "cut every stream at every point, a run per cut: a matrix",
		UsageText: "fray sweep --upstream URL [--server CMD] [options] -- CLIENT [ARGS...]\n\n" +
			"The client runs once without faults, then once per cut point and mode.\n" +
			"The exit code is the worst cell's.\n" +
			exitCodesHelp() + "\n\n" +
			"example:\n   fray sweep --upstream http://127.0.0.1:3000/mcp \\\n" +
			"     --server 'node server.mjs' -- sh -c 'node client.mjs \"$FRAY_URL\"'",
		Flags: append(repeatFlags(64),
			&cli.IntFlag{Name: "max-events", Value: 3, Usage: "cut after each of the first `N` events"},
			&cli.StringFlag{Name: "dir", Value: "fray-sweep", Usage: "failing cells' files go to `DIR`"},
			&cli.StringFlag{Name: "report", Usage: "write the sweep as JSON to `FILE`"},
			&cli.StringFlag{Name: "junit", Usage: "write JUnit XML to `FILE`: a test case per cell"},
			&cli.StringFlag{Name: "html", Usage: "an index page `FILE`: a timeline per failing cell"},
			&cli.BoolFlag{Name: "allow-inconclusive", Usage: "exit 0, not 4, when a cell saw too little"},
		),
		Action:       runSweep,
		OnUsageError: usageError,
	}
}

func runSweep(c *cli.Context) error {
	if c.Int("max-events") < 0 {
		return usagef("--max-events %d: must not be negative", c.Int("max-events"))
	}
	if err := outputDirs(c, "report", "junit", "html"); err != nil {
		return err
	}
	errw := c.App.ErrWriter
	ctx, hard, stop := stopSignals(c.Context, errw)
	defer stop()
	rep, err := newRepeater(c, runCtx{ctx, hard}, errw)
	if err != nil {
		return err
	}
	defer rep.stop()
	dir := c.String("dir")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return usagef("--dir %s: %v", dir, err)
	}
	streams, err := learnStreams(c, rep, dir)
	if err != nil {
		return err
	}
	cells, left := sweep.Plan(streams, c.Int("max-events"), c.Int("max-runs"))
	if len(cells) == 0 {
		return cli.Exit("verdict inconclusive: the run without faults showed no SSE stream to cut (no request answered with a stream, no GET stream)", exitInconclusive)
	}
	sayf(c, errw, "sweep: %d cells to run (%d left out by --max-runs)", len(cells), left)
	sw := sweep.Sweep{Left: left}
	worst := report.Report{Verdict: report.VerdictPass}
	for i, cell := range cells {
		res, r, err := runCell(c, rep, dir, i, cell)
		if err != nil {
			return err
		}
		sayf(c, errw, "sweep: cell %d/%d: %s: %s", i+1, len(cells), cell, res.Outcome)
		sw.Results = append(sw.Results, res)
		worst = worse(worst, r)
		if ctx.Err() != nil {
			break
		}
	}
	if err := writeSweep(c, sw, dir); err != nil {
		return cli.Exit(err.Error(), exitNoStart)
	}
	if ctx.Err() != nil {
		return cli.Exit("interrupted: the matrix covers the cells run up to the signal", exitInterrupted)
	}
	worst.Why = sweepWhy(sw, worst.Why)
	worst.Accepted = c.Bool("allow-inconclusive") && worst.Verdict == report.VerdictInconclusive
	return verdictError(worst)
}

// sweepWhy says how many cells failed or were inconclusive, and why the
// worst one was.
func sweepWhy(sw sweep.Sweep, worst string) string {
	failed, inconclusive := 0, 0
	for _, r := range sw.Results {
		switch r.Outcome.Verdict {
		case report.VerdictFail:
			failed++
		case report.VerdictInconclusive:
			inconclusive++
		}
	}
	return fmt.Sprintf("%d of %d cells failed, %d inconclusive; the first of the worst: %s", failed, len(sw.Results), inconclusive, worst)
}

// learnStreams runs the client once without faults and returns the
// streams the run showed. A run that fails without faults ends the sweep:
// no cut can be judged against it.
func learnStreams(c *cli.Context, rep *repeater, dir string) ([]sweep.Stream, error) {
	path := filepath.Join(dir, "unfaulted.jsonl.gz")
	r, err := rep.run(nil, path)
	if err != nil {
		_ = os.Remove(path)
		return nil, err
	}
	if o := sweep.Decide(r); o.IsFail() {
		sayf(c, rep.errw, "sweep: the run without faults failed: %s (its trace: %s)", o, path)
		return nil, verdictError(r)
	}
	rd, err := trace.Open(path, trace.ReadOptions{Partial: true})
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	var l sweep.Learner
	observeAll(rd, &l)
	streams := l.Streams()
	labels := make([]string, len(streams))
	for i, s := range streams {
		labels[i] = fmt.Sprintf("%s (%d events)", s.Label(), s.Events)
	}
	sayf(c, rep.errw, "sweep: the run without faults: %s; streams to cut: %s", r.Verdict, strings.Join(labels, ", "))
	_ = os.Remove(path)
	return streams, nil
}

// runCell runs one cell; a failing cell keeps its profile and its trace in
// dir, and gets the command that reproduces it.
func runCell(c *cli.Context, rep *repeater, dir string, i int, cell sweep.Cell) (sweep.Result, report.Report, error) {
	text, err := cell.Profile()
	if err != nil {
		return sweep.Result{}, report.Report{}, err
	}
	base := filepath.Join(dir, fmt.Sprintf("cell-%02d", i+1))
	prof, err := profiles.Parse(base+".toml", bytes.NewReader(text))
	if err != nil {
		return sweep.Result{}, report.Report{}, fmt.Errorf("sweep: the profile of %s: %w", cell, err)
	}
	res := sweep.Result{Cell: cell, Trace: base + ".jsonl.gz"}
	r, err := rep.run(prof, res.Trace)
	if err != nil {
		_ = os.Remove(res.Trace)
		return sweep.Result{}, report.Report{}, err
	}
	res.Outcome = sweep.Decide(r)
	if !res.Outcome.IsFail() {
		_ = os.Remove(res.Trace)
		res.Trace = ""
		return res, r, nil
	}
	res.Profile = base + ".toml"
	if err := os.WriteFile(res.Profile, text, 0o644); err != nil {
		return sweep.Result{}, report.Report{}, fmt.Errorf("sweep: %w", err)
	}
	res.Reproduce = rep.runLine("--reproduce", res.Trace)
	return res, r, nil
}

// worse is the report whose verdict asks for the higher exit code: a
// failed check, then a failed client, then an inconclusive run.
func worse(a, b report.Report) report.Report {
	rank := func(r report.Report) int {
		switch {
		case r.Verdict == report.VerdictFail && r.ChecksFailed():
			return 3
		case r.Verdict == report.VerdictFail:
			return 2
		case r.Verdict == report.VerdictInconclusive:
			return 1
		}
		return 0
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}

// writeSweep prints the matrix and writes the files asked for.
func writeSweep(c *cli.Context, sw sweep.Sweep, dir string) error {
	var errs []error
	if page := c.String("html"); page != "" {
		if err := writeSweepPages(page, &sw); err != nil {
			errs = append(errs, err)
		}
	}
	for flag, write := range map[string]func(io.Writer) error{"report": sw.WriteJSON, "junit": sw.WriteJUnit} {
		if path := c.String(flag); path != "" {
			if err := report.WriteFile(path, write); err != nil {
				errs = append(errs, fmt.Errorf("--%s: %w", flag, err))
			}
		}
	}
	if err := sw.WriteMatrix(c.App.Writer); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// observeAll shows obs every observation of rd up to the first it cannot
// read: a partial trace's whole part.
func observeAll(rd *trace.Reader, obs observe.Observer) {
	for {
		o, err := rd.Next()
		if err != nil {
			return
		}
		obs.Observe(o)
	}
}
