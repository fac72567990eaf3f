package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
	"github.com/urfave/cli/v2"

	"github.com/frayproxy/fray/checks"
	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy/report"
	"github.com/frayproxy/fray/proxy/trace"
	"github.com/frayproxy/fray/proxy/verify"
)

func checkCommand() *cli.Command {
	return &cli.Command{
		Name:  "check",
		Usage: "check a recorded trace offline: the live run's checks, verdict and exit code",
		UsageText: "fray check TRACE [--report FILE] [--junit FILE] [--partial]\n\n" +
			"example:\n   fray proxy --upstream http://127.0.0.1:3000 --profile lossy-resume --trace run.jsonl.gz\n" +
			"   fray check run.jsonl.gz --report report.json\n\n" +
			"exit codes: 0 every check of error severity passed, 1 one failed, 2 bad trace or invocation",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "report", Usage: "write the JSON report to `FILE` (schema in the README)"},
			&cli.StringFlag{Name: "junit", Usage: "write the checks as JUnit XML to `FILE`, one testcase per check"},
			&cli.BoolFlag{Name: "partial", Usage: "check the complete part of a truncated trace (a run that was killed) and say what was dropped"},
		},
		Action:       runCheck,
		OnUsageError: usageError,
	}
}

func runCheck(c *cli.Context) error {
	args, err := positional(c)
	if err != nil {
		return err
	}
	if len(args) != 1 {
		return usagef("check takes one trace file, got %q", args)
	}
	out := &outputs{reportPath: c.String("report"), junitPath: c.String("junit"), quiet: true, stdout: c.App.Writer}
	r, note, err := checkTrace(args[0], c.Bool("partial"))
	if err != nil {
		return err
	}
	if note != "" {
		fmt.Fprintf(c.App.ErrWriter, "fray: %s\n", note)
	}
	return out.finish(r)
}

// checkTrace feeds the trace at path into a fresh verifier set up as the
// live run's was, and returns its final report; note says what a partial
// read dropped. Errors are bad-trace errors (exit code 2).
func checkTrace(path string, partial bool) (report.Report, string, error) {
	rd, err := trace.Open(path, trace.ReadOptions{Partial: partial})
	if err != nil {
		return report.Report{}, "", badTrace(err)
	}
	defer rd.Close()
	opts, note, err := traceVerifyOptions(rd.Header(), path)
	if err != nil {
		return report.Report{}, "", err
	}
	v := verify.New(opts)
	end, err := feed(rd, v)
	if err != nil {
		return report.Report{}, "", badTrace(err)
	}
	if t := rd.Truncation(); t != nil {
		note = joinNotes(note, fmt.Sprintf("trace %s is truncated: %s; the verdict covers what was read, judged as of its last observation", path, t))
	}
	return settle(v, end), note, nil
}

// feed passes every observation of rd to v, in order, and returns how the
// run ended: the end line's account, or for a partial read the last
// observation's time, not drained.
func feed(rd *trace.Reader, v *verify.Verifier) (trace.End, error) {
	var last time.Duration
	for {
		o, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return trace.End{}, err
		}
		last = max(last, o.At)
		v.Observe(o)
	}
	if end, ok := rd.End(); ok {
		return end, nil
	}
	return trace.End{At: last}, nil
}

// settle is the verdict of a run that ended as end says: everything still
// owed is judged when the run drained; when fray had to end exchanges
// itself, only what was past its deadline is, as a snapshot judges. The
// live run and the offline check both make their final report here.
func settle(v *verify.Verifier, end trace.End) report.Report {
	var r report.Report
	if !end.Drained {
		r = v.Report(end.At)
	} else {
		r = v.Final(end.At)
	}
	if end.Command != nil {
		r.Command = &report.Command{Args: end.Command, ExitCode: end.ExitCode}
	}
	return r
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

// traceVerifyOptions sets a verifier up from a trace's header: the
// profile's name, seed and check severities, from the profile text the
// trace carries. A trace outlives the fray that wrote it: when its profile
// no longer passes this fray's validation (a check renamed since), the
// [checks] table is read as it stands, ids this verifier does not know are
// ignored, and note says so.
func traceVerifyOptions(h trace.Header, path string) (opts verify.Options, note string, err error) {
	if h.ProfileText == "" {
		return verify.Options{Profile: h.Profile, Seed: h.Seed}, "", nil
	}
	prof, perr := profiles.Parse(h.Profile+".toml", strings.NewReader(h.ProfileText))
	if perr == nil {
		opts = verifyOptions(prof, h.Seed)
		opts.Profile = h.Profile
		return opts, "", nil
	}
	var doc struct {
		Checks map[string]checks.Severity `toml:"checks"`
	}
	if err := toml.Unmarshal([]byte(h.ProfileText), &doc); err != nil {
		return verify.Options{}, "", usagef("trace %s: the profile it records does not parse:\n%v", path, perr)
	}
	opts = verify.Options{Profile: h.Profile, Seed: h.Seed, Severity: doc.Checks}
	note = fmt.Sprintf("trace %s: its profile does not pass this fray's validation; its check severities are used as they stand:\n%v", path, perr)
	return opts, note, nil
}

// verifyOptions are the verifier's options for a profile compiled with
// seed: its name, the seed and its check severities.
func verifyOptions(prof *profiles.Profile, seed uint64) verify.Options {
	opts := verify.Options{Profile: prof.Name, Seed: seed}
	if len(prof.Checks) > 0 {
		opts.Severity = maps.Clone(prof.Checks)
	}
	return opts
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
