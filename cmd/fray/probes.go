package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/profiles/probes"
	"github.com/frayproxy/fray/proxy"
	"github.com/frayproxy/fray/proxy/report"
)

// probeUsage is the usage of fray run's --probe.
const probeUsage = "run known-bug probes `NAMES`: all, client, server, names"

// probesCommand lists the probe catalog and shows a probe's profile.
func probesCommand() *cli.Command {
	return &cli.Command{
		Name:      "probes",
		Usage:     "list the probes of known reconnection bugs",
		UsageText: "fray probes list|show\n(fray run --probe NAME|all runs them)\n\nexample:\n   fray probes list",
		Action:    subcommandsOnly,
		Subcommands: []*cli.Command{
			{
				Name:      "list",
				Usage:     "list the probes: end, finding, public report",
				UsageText: "fray probes list\n\nexample:\n   fray probes list",
				Action:    probesList,
			},
			{
				Name:      "show",
				Usage:     "print a probe's fault profile",
				UsageText: "fray probes show NAME\n\nexample:\n   fray probes show resume-token-dropped",
				Action:    probesShow,
			},
		},
	}
}

func probesList(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROBE\tEND\tFINDING\tREPORT")
	for _, p := range probes.All() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Name, p.End, p.Finding, p.Issue)
	}
	return tw.Flush()
}

// probesShow prints the probe's profile after comments that say what it
// probes, so that the output is itself a profile a user can edit and run.
func probesShow(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("probes show: give one probe name; see fray probes list")
	}
	sel, err := probes.Select(c.Args().First())
	if err != nil || len(sel) != 1 {
		return usagef("probes show: %s", strings.TrimPrefix(fmt.Sprint(err), "probes: "))
	}
	p := sel[0]
	text, err := p.Text()
	if err != nil {
		return err
	}
	w := c.App.Writer
	fmt.Fprintf(w, "# probe %s: %s\n# bug: %s\n# report: %s\n", p.Name, p.End, p.Bug, p.Issue)
	for _, r := range p.Related {
		fmt.Fprintf(w, "# also: %s\n", r)
	}
	fmt.Fprintf(w, "# revision: %s\n# finding: %s\n", p.Revision, p.Finding)
	if p.Needs != "" {
		fmt.Fprintf(w, "# needs: %s\n", p.Needs)
	}
	if p.FoundIn != "" {
		fmt.Fprintf(w, "# found in: %s\n", p.FoundIn)
	}
	fmt.Fprintf(w, "# timeout: %s (fray run --probe stops the client command after it)\n", p.ClientTimeout())
	_, err = w.Write(text)
	return err
}

// runProbes is fray run --probe: the client command runs once per probe,
// each time through a new engine with the probe's profile (and a new
// --server, when one is given); the table says what each showed, the
// report files hold the runs' reports merged, and the exit code follows
// the outcomes: 1 a bug found, 3 a run failed otherwise, 4 a probe said
// nothing (its trigger not met), 0 every probe survived. --report holds
// the runs' reports merged, --junit a test case per probe.
func runProbes(c *cli.Context) error {
	sel, err := probes.Select(c.String("probe"))
	if err != nil {
		return usagef("--probe: %s", strings.TrimPrefix(err.Error(), "probes: "))
	}
	for _, f := range []string{"profile", "seed", "reproduce", "trace", "html"} {
		if c.IsSet(f) {
			return usagef("--probe runs each probe with its own profile and seed; drop --%s", f)
		}
	}
	set, err := runFlags(c)
	if err != nil {
		return err
	}
	out, err := newOutputs(c, c.App.ErrWriter)
	if err != nil {
		return err
	}
	out.progress = nil
	errw := c.App.ErrWriter
	ctx, hard, stop := stopSignals(c.Context, errw)
	defer stop()
	var results []probes.Result
	var reports []report.Report
	codes := map[string]error{}
	for i, p := range sel {
		sayf(c, errw, "probe %d/%d: %s", i+1, len(sel), p.Name)
		prof, err := p.Profile()
		if err != nil {
			return err
		}
		r, err := runProbe(c, runCtx{ctx, hard}, probeSettings(set, p), prof, errw)
		if err != nil {
			return err
		}
		res := probes.Judge(p, p.TriggerKinds(prof), r)
		sayf(c, errw, "probe %d/%d: %s", i+1, len(sel), strings.ReplaceAll(probeRow(res), "\t", "  "))
		results, reports = append(results, res), append(reports, r)
		if res.Outcome == probes.Failed {
			codes[p.Name] = verdictError(r)
		}
		if ctx.Err() != nil {
			break
		}
	}
	if err := writeProbeTable(out.summary, results); err != nil {
		return err
	}
	merged, err := report.Merge(reports...)
	if err != nil {
		return err
	}
	if err := writeProbeFiles(out, merged, results); err != nil {
		return cli.Exit(err.Error(), exitNoStart)
	}
	if ctx.Err() != nil {
		return cli.Exit("interrupted: the reports cover the probes run up to the signal", exitInterrupted)
	}
	return probesExit(results, codes, out.allow)
}

// runProbe runs the client command once through an engine with prof and
// returns the run's report.
func runProbe(c *cli.Context, rc runCtx, set runSettings, prof *profiles.Profile, errw io.Writer) (report.Report, error) {
	log, err := newLogger(c, errw)
	if err != nil {
		return report.Report{}, err
	}
	eng, err := newEngine(proxy.Options{Upstream: set.origin, Drain: proxy.ProxyDrain, Profile: prof, Logger: log, LogFaults: c.Bool("log-faults")})
	if err != nil {
		return report.Report{}, err
	}
	// The command's output goes to stderr: stdout holds the table.
	run, err := runClientOnce(c, rc, eng, set, errw, errw, nil)
	if err == nil {
		err = run.serverDied
	}
	return run.report, err
}

// writeProbeFiles writes the files of --report (the runs' reports,
// merged) and --junit (a test case per probe).
func writeProbeFiles(o *outputs, merged report.Report, results []probes.Result) error {
	merged.Accepted = o.allow && merged.Verdict == report.VerdictInconclusive
	return o.writeFiles(func(w writer) func(io.Writer) error {
		if w.flag == "junit" {
			return func(out io.Writer) error { return probes.WriteJUnit(out, results) }
		}
		return func(out io.Writer) error { return w.write(out, merged) }
	})
}

// writeProbeTable prints one line per probe: whether its faults fired,
// its outcome, and why.
func writeProbeTable(w io.Writer, results []probes.Result) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROBE\tEND\tTRIGGERED\tOUTCOME\tDETAIL")
	for _, r := range results {
		fmt.Fprintln(tw, probeRow(r))
	}
	return tw.Flush()
}

// probeRow is a probe's row of the table, its columns tab-separated: name,
// end, whether its faults fired, outcome, detail.
func probeRow(r probes.Result) string {
	trig := "no"
	if r.Triggered {
		trig = "yes"
	}
	return fmt.Sprintf("%s\t%s\t%s\t%s\t%s", r.Probe.Name, r.Probe.End, trig, r.Outcome, oneLineDetail(r.Detail))
}

// oneLineDetail keeps a detail to one line of a readable length.
func oneLineDetail(s string) string {
	s = report.Printable(strings.Join(strings.Fields(s), " "))
	const most = 160
	if len(s) > most {
		s = s[:most-3] + "..."
	}
	return s
}

// probesExit is the exit code the outcomes ask for, as an error.
func probesExit(results []probes.Result, failed map[string]error, allowInconclusive bool) error {
	var found, inconclusive []string
	for _, r := range results {
		switch r.Outcome {
		case probes.Found:
			found = append(found, r.Probe.Name)
		case probes.Inconclusive:
			inconclusive = append(inconclusive, r.Probe.Name)
		}
	}
	switch {
	case len(found) > 0:
		return cli.Exit("probes found their bug: "+strings.Join(found, ", "), exitFindings)
	case len(failed) > 0:
		for _, r := range results {
			if err := failed[r.Probe.Name]; err != nil {
				return err
			}
		}
	case len(inconclusive) > 0 && !allowInconclusive:
		return cli.Exit("probes said nothing (their trigger was not met, or fray saw too little): "+
			strings.Join(inconclusive, ", ")+" (--allow-inconclusive accepts that)", exitInconclusive)
	}
	return nil
}
