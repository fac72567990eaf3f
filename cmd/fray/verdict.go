package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/frayproxy/fray/proxy/report"
)

// A writer is one file a verdict can be written to, named by its flag.
type writer struct {
	flag, usage string
	write       func(io.Writer, report.Report) error
}

// writers are the verdict's files: every command that ends with a
// verdict takes each as a flag.
var writers = []writer{
	{"report", "write the JSON report to `FILE` (-: stdout)", report.WriteJSON},
	{"junit", "write JUnit XML to `FILE` (-: stdout)", report.WriteJUnit},
	checksJSONWriter,
}

// writerFlags are the flags of writers, --baseline, --allow-inconclusive and
// --verbose: every command that ends with a verdict takes them.
func writerFlags() []cli.Flag {
	out := make([]cli.Flag, 0, len(writers)+3)
	for _, w := range writers {
		out = append(out, &cli.StringFlag{Name: w.flag, Usage: w.usage})
	}
	return append(out, baselineFlag(), &cli.BoolFlag{Name: "allow-inconclusive",
		Usage: "exit 0, not 4, when too little was seen"},
		&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "list every check in the summary"})
}

// reportFlags are the options of every command that ends with a verdict
// while it runs: the writers and the progress line.
func reportFlags() []cli.Flag {
	return append(writerFlags(), &cli.BoolFlag{Name: "quiet", Usage: "no live progress line"})
}

// outputs is where a verdict goes: the files, stdout for the summary, and
// stderr for the progress line and the verdict's one-line reason.
type outputs struct {
	paths    map[string]string // writer flag -> path; stdoutPath for stdout
	allow    bool              // --allow-inconclusive
	stdout   io.Writer         // where a file named stdoutPath goes
	summary  io.Writer         // the summary and what follows: stdout, or stderr when a file took stdout
	progress *report.Progress  // nil when quiet
	color    bool              // colour the summary's verdicts
	verbose  bool              // list every check in the summary
	baseline *expected         // --baseline; nil when none
	// interrupted: a signal stopped the run; the verdict says so.
	interrupted bool
	// width is the summary's width: the terminal's, 0 when not one.
	width int
	// whole says where every finding and its evidence are, the summary's
	// last line.
	whole string
}

// stdoutPath is the file name that means stdout, for every writer.
const stdoutPath = "-"

// newOutputs reads the writer flags and --quiet (when the command has
// it); errw is the command's stderr. A file written to stdout moves the
// summary to errw, so that stdout holds that file alone, for a pipe; only
// one file can go to stdout.
func newOutputs(c *cli.Context, errw io.Writer) (*outputs, error) {
	o := &outputs{paths: map[string]string{}, stdout: c.App.Writer, summary: c.App.Writer, allow: c.Bool("allow-inconclusive"), verbose: c.Bool("verbose")}
	var toStdout []string
	for _, w := range writers {
		if p := c.String(w.flag); p != "" {
			o.paths[w.flag] = p
			if p == stdoutPath {
				toStdout = append(toStdout, "--"+w.flag)
			}
		}
	}
	var err error
	if o.baseline, err = readBaseline(c); err != nil {
		return nil, err
	}
	if len(toStdout) > 1 {
		return nil, usagef("%s: only one of them can go to stdout (-)", strings.Join(toStdout, " and "))
	}
	if len(toStdout) == 1 {
		o.summary = errw
	}
	o.color = wantColor(o.summary, os.Getenv)
	o.width = terminalWidth(o.summary)
	o.whole = wholeLine(c)
	if lookupFlag(c.Command, "quiet") != nil && !c.Bool("quiet") {
		o.progress = &report.Progress{W: errw, Terminal: isTerminal(errw)}
	}
	return o, nil
}

// stderr is where other output to stderr goes, so that it does not tear
// the progress line.
func (o *outputs) stderr(errw io.Writer) io.Writer {
	if o.progress != nil {
		return o.progress
	}
	return errw
}

// runProgress redraws the progress line from live until stop is closed;
// the returned function waits for it to end and erases the line.
func (o *outputs) runProgress(live func() report.Live, stop <-chan struct{}) (wait func()) {
	if o.progress == nil {
		return func() {}
	}
	ended := every(o.progress.Interval()/2, stop, func() { _, _ = o.progress.Update(live()) })
	return func() {
		ended()
		_ = o.progress.Stop()
	}
}

// runSnapshots writes snap() to the report file every interval, whole
// each time, until stop is closed; the returned function waits for the
// last write to end, so that no snapshot lands after the final report.
// Failed writes are said on errw and retried at the next interval.
func (o *outputs) runSnapshots(interval time.Duration, snap func() report.Report, stop <-chan struct{}, errw io.Writer) (wait func()) {
	path := o.paths["report"]
	if interval <= 0 || path == "" {
		return func() {}
	}
	return every(interval, stop, func() {
		r := snap()
		if err := report.WriteFile(path, func(w io.Writer) error { return report.WriteJSON(w, r) }); err != nil {
			fmt.Fprintf(errw, "fray: report snapshot: %v\n", err)
		}
	})
}

// every calls fn every interval until stop is closed; the returned
// function waits for the last call to end.
func every(interval time.Duration, stop <-chan struct{}, fn func()) (wait func()) {
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				fn()
			}
		}
	})
	return wg.Wait
}

// finish writes the verdict's files, prints the summary and returns the
// error that gives the exit code the verdict asks for: nil on a pass.
func (o *outputs) finish(r report.Report) error {
	o.judge(&r)
	if o.interrupted {
		r.Interrupt()
	}
	err := o.writeFiles(func(w writer) func(io.Writer) error {
		return func(out io.Writer) error { return w.write(out, r) }
	})
	if serr := o.writeSummary(r); serr != nil {
		err = errors.Join(err, fmt.Errorf("summary: %w", serr))
	}
	if err != nil {
		return cli.Exit(err.Error(), exitNoStart)
	}
	return verdictError(r)
}

// writeFiles writes the file of every writer flag given, to its path or
// to stdout, with what file returns for that writer.
func (o *outputs) writeFiles(file func(writer) func(io.Writer) error) error {
	var errs []error
	for _, w := range writers {
		write := file(w)
		switch path := o.paths[w.flag]; path {
		case "":
		case stdoutPath:
			if err := write(o.stdout); err != nil {
				errs = append(errs, fmt.Errorf("--%s -: %w", w.flag, err))
			}
		default:
			if err := report.WriteFile(path, write); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// writeSummary prints the summary, coloured when o.color says so.
func (o *outputs) writeSummary(r report.Report) error {
	opts := report.SummaryOptions{Verbose: o.verbose, Width: o.width}
	var b bytes.Buffer
	if err := report.WriteSummary(&b, r, opts); err != nil {
		return err
	}
	if o.whole != "" {
		b.WriteString("  " + o.whole + "\n")
	}
	out := b.Bytes()
	if o.color {
		out = colorize(out)
	}
	_, err := o.summary.Write(out)
	return err
}

// wholeFlags are the flags whose files hold every finding and its
// evidence, in the order the summary names them.
var wholeFlags = []string{"report", "html", "trace"}

// wholeLine says where every finding and its evidence are: the files the
// command writes ("fray.json (--report)"), or, when it writes none, the
// flags of the command that would.
func wholeLine(c *cli.Context) string {
	var files, flags []string
	for _, f := range wholeFlags {
		if lookupFlag(c.Command, f) == nil {
			continue
		}
		flags = append(flags, "--"+f+" FILE")
		if p := c.String(f); p != "" && p != stdoutPath {
			files = append(files, fmt.Sprintf("%s (--%s)", p, f))
		}
	}
	switch {
	case len(files) > 0:
		return "every finding and its evidence: " + strings.Join(files, ", ")
	case len(flags) == 1:
		return "every finding and its evidence: " + flags[0] + " writes them"
	case len(flags) > 1:
		return "every finding and its evidence: " + strings.Join(flags, ", ") + " (any of them) writes them"
	}
	return ""
}

// terminalWidth is the width of the terminal w writes to; 0 when w is not
// one.
func terminalWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok || !isTerminal(w) {
		return 0
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return width
}

// verdictError is nil for a pass (and for an accepted inconclusive run),
// and otherwise the error whose exit code the verdict asks for, saying why:
// 1 when a check of error severity failed (or a baseline entry is fixed),
// 3 when only the client command failed, 4 when the run is inconclusive,
// 130 when a signal stopped it.
// With a baseline, the verdict is the baselined one.
func verdictError(r report.Report) error {
	verdict, why, checksFailed := r.Outcome()
	with := ""
	if r.Baseline != nil {
		with = " (baseline " + r.Baseline.File + ")"
	}
	switch {
	case verdict == report.VerdictInterrupted:
		return cli.Exit("verdict interrupted: the reports cover the run up to the signal", exitInterrupted)
	case verdict == report.VerdictFail && checksFailed:
		return cli.Exit("verdict fail"+with+": "+why, exitFindings)
	case verdict == report.VerdictFail:
		return cli.Exit("verdict fail"+with+": "+why, exitCommand)
	case verdict == report.VerdictInconclusive && !r.Accepted:
		return cli.Exit("verdict inconclusive"+with+": "+why+" (--allow-inconclusive accepts such a run)", exitInconclusive)
	}
	return nil
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
