package main

import (
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/frayproxy/fray/proxy"
	"github.com/frayproxy/fray/proxy/report"
	"github.com/frayproxy/fray/proxy/timeline"
	"github.com/frayproxy/fray/proxy/trace"
)

func reportCommand() *cli.Command {
	return &cli.Command{
		Name:  "report",
		Usage: "draw a trace as an HTML timeline, or merge JSON reports",
		UsageText: "fray report TRACE --html FILE [--partial]\n   fray report merge A.json B.json... [--report OUT] [--junit FILE]\n\n" +
			"example:\n   fray report run.jsonl.gz --html run.html\n   fray report merge shard1.json shard2.json --report all.json",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "html", Usage: "write the timeline page to `FILE`"},
			&cli.BoolFlag{Name: "partial", Usage: "draw what a truncated trace holds"},
		},
		Subcommands: []*cli.Command{{
			Name:  "merge",
			Usage: "merge the JSON reports of several fray instances",
			UsageText: "fray report merge A.json B.json... [--report OUT] [--junit FILE]\n\n" +
				"(a report that cannot be read or merged is a bad invocation)\n" + exitCodesHelp() + "\n\n" +
				"example:\n   fray report merge shard1.json shard2.json --report all.json",
			Flags:        writerFlags(),
			Action:       runReportMerge,
			OnUsageError: usageError,
		}},
		Action:       runReportHTML,
		OnUsageError: usageError,
	}
}

func runReportHTML(c *cli.Context) error {
	path, err := traceArg(c, "report needs a trace file: fray report TRACE --html FILE, or fray report merge A.json B.json...",
		"report takes one trace file (or the merge subcommand)")
	if err != nil {
		return err
	}
	if c.String("html") == "" {
		return usagef("report %s: say where the timeline goes with --html FILE", path)
	}
	in, err := timelineInput(path, c.Bool("partial"))
	if err != nil {
		return err
	}
	if in.Note != "" {
		fmt.Fprintf(c.App.ErrWriter, "fray: %s\n", report.PrintableLines(in.Note))
	}
	err = report.WriteFile(c.String("html"), func(w io.Writer) error { return timeline.Write(w, in) })
	if err != nil {
		return err
	}
	fmt.Fprintf(c.App.ErrWriter, "fray: timeline of %d observations written to %s\n", len(in.Observations), c.String("html"))
	return nil
}

// timelineInput reads the trace at path and checks it as fray check does,
// so that the page shows the findings next to the traffic.
func timelineInput(path string, partial bool) (timeline.Input, error) {
	t, err := trace.ReadFile(path, trace.ReadOptions{Partial: partial})
	if err != nil {
		return timeline.Input{}, badTrace(err)
	}
	r, note, err := proxy.Judge(t)
	if err != nil {
		return timeline.Input{}, usagef("trace %s: %v", path, err)
	}
	if note != "" {
		note = fmt.Sprintf("trace %s: %s", path, note)
	}
	in := timeline.Input{Header: t.Header, Observations: t.Observations, End: t.End.At, Report: &r, Note: note,
		Command: t.End.Command, ExitCode: t.End.ExitCode}
	if t.Truncation != nil {
		in.Note = joinNotes(note, fmt.Sprintf("trace %s is truncated: %s", path, t.Truncation))
	}
	return in, nil
}

func runReportMerge(c *cli.Context) error {
	args, err := positional(c)
	if err != nil {
		return err
	}
	if len(args) == 0 {
		return usagef("report merge needs the JSON reports to merge")
	}
	var reports []report.Report
	for _, path := range args {
		r, err := loadReport(path)
		if err != nil {
			return err
		}
		reports = append(reports, r)
	}
	merged, err := report.Merge(reports...)
	if err != nil {
		return cli.Exit(err.Error(), exitUsage)
	}
	out, err := newOutputs(c, c.App.ErrWriter)
	if err != nil {
		return err
	}
	return out.finish(merged)
}

func loadReport(path string) (report.Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return report.Report{}, usagef("report %s: %v", path, err)
	}
	defer f.Close()
	r, err := report.ReadJSON(f)
	if err != nil {
		return report.Report{}, usagef("report %s: %v", path, err)
	}
	return r, nil
}
