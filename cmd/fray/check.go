package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/frayproxy/fray/proxy"
	"github.com/frayproxy/fray/proxy/report"
	"github.com/frayproxy/fray/proxy/trace"
)

func checkCommand() *cli.Command {
	return &cli.Command{
		Name:  "check",
		Usage: "judge a recorded trace offline, as the live run was",
		UsageText: "fray check TRACE [--report FILE] [--junit FILE] [--partial]\n\n" +
			"(every option is explained in docs/cli.md; a bad trace is a bad invocation)\n" + exitCodesHelp() + "\n\n" +
			"example:\n   fray proxy --upstream http://127.0.0.1:3000 --profile lossy-resume \\\n" +
			"     --trace run.jsonl.gz\n" +
			"   fray check run.jsonl.gz --report report.json",
		Flags: append(writerFlags(),
			&cli.BoolFlag{Name: "partial", Usage: "judge what a truncated trace holds"}),
		Action:       runCheck,
		OnUsageError: usageError,
	}
}

func runCheck(c *cli.Context) error {
	path, err := traceArg(c, "check needs the trace file of a run: fray check TRACE (record one with --trace FILE on fray proxy, run or demo)",
		"check takes one trace file")
	if err != nil {
		return err
	}
	out, err := newOutputs(c, c.App.ErrWriter)
	if err != nil {
		return err
	}
	r, note, err := checkTrace(path, c.Bool("partial"))
	if err != nil {
		return err
	}
	if note != "" {
		fmt.Fprintf(c.App.ErrWriter, "fray: %s\n", report.PrintableLines(note))
	}
	return out.finish(r)
}

// checkTrace judges the trace at path as the live run was judged, and
// returns its final report; note says what a partial read dropped. Errors
// are bad-trace errors (exit code 2).
func checkTrace(path string, partial bool) (report.Report, string, error) {
	rd, err := trace.Open(path, trace.ReadOptions{Partial: partial})
	if err != nil {
		return report.Report{}, "", badTrace(err)
	}
	defer rd.Close()
	r, note, err := proxy.Check(rd)
	if errors.Is(err, proxy.ErrProfileText) {
		return report.Report{}, "", usagef("trace %s: %v", path, err)
	}
	if err != nil {
		return report.Report{}, "", badTrace(err)
	}
	if note != "" {
		note = fmt.Sprintf("trace %s: %s", path, note)
	}
	if t := rd.Truncation(); t != nil {
		note = joinNotes(note, fmt.Sprintf("trace %s is truncated: %s; the verdict covers what was read, judged as of its last observation", path, t))
	}
	return r, note, nil
}

// badTrace turns a trace that cannot be read into exit code 2, with a hint
// for a truncated one.
func badTrace(err error) error {
	msg := err.Error()
	if errors.Is(err, trace.ErrTruncated) {
		msg += "\n(--partial reads the complete part of a truncated trace)"
	}
	return cli.Exit(msg, exitUsage)
}

// traceArg returns the one trace file a command was given: need says what
// a command without one lacks, one what more than one breaks.
func traceArg(c *cli.Context, need, one string) (string, error) {
	args, err := positional(c)
	switch {
	case err != nil:
		return "", err
	case len(args) == 0:
		return "", usagef("%s", need)
	case len(args) > 1:
		return "", usagef("%s, got %d: %q", one, len(args), args)
	}
	return args[0], nil
}

// positional returns the command's positional arguments and applies the
// flags given after them ("fray check TRACE --report FILE"), which the
// flag parser leaves alone once it meets the first positional argument.
// After "--" everything is positional.
func positional(c *cli.Context) ([]string, error) {
	args := c.Args().Slice()
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(pos, args[i+1:]...), nil
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			pos = append(pos, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := lookupFlag(c.Command, name)
		if f == nil {
			return nil, usagef("flag provided but not defined: %s", a)
		}
		if _, isBool := f.(*cli.BoolFlag); isBool && !hasValue {
			value, hasValue = "true", true
		}
		if !hasValue {
			if i+1 >= len(args) {
				return nil, usagef("flag needs an argument: %s", a)
			}
			i++
			value = args[i]
		}
		if err := c.Set(name, value); err != nil {
			return nil, usagef("invalid value %q for flag %s: %v", value, a, err)
		}
	}
	return pos, nil
}

func lookupFlag(cmd *cli.Command, name string) cli.Flag {
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

// joinNotes puts notes on separate lines, skipping empty ones.
func joinNotes(notes ...string) string {
	var out []string
	for _, n := range notes {
		if n != "" {
			out = append(out, n)
		}
	}
	return strings.Join(out, "\nfray: ")
}
