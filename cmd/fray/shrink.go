package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/profiles/sweep"
	"github.com/frayproxy/fray/proxy/trace"
)

func shrinkCommand() *cli.Command {
	return &cli.Command{
		Name:  "shrink",
		Usage: "rerun a failing run with fewer faults, down to the cause",
		UsageText: "fray shrink --reproduce TRACE --upstream URL [--server CMD] [options] \\\n" +
			"     -- CLIENT [ARGS...]\n\n" +
			"Prints the smallest profile that still fails the same check, and the\n" +
			"command that runs it.\n" +
			"It exits 0 when it shrank the run, 4 when the failure did not come back,\n" +
			"and otherwise as fray run: 2 bad invocation, 5 could not start,\n" +
			"130 interrupted (docs/cli.md)\n\n" +
			"example:\n   fray shrink --reproduce bug.jsonl.gz \\\n" +
			"     --upstream http://127.0.0.1:3000/mcp \\\n" +
			"     -- sh -c 'node client.mjs \"$FRAY_URL\"'",
		Flags: append(repeatFlags(32),
			&cli.StringFlag{Name: "reproduce", Usage: "the failing run's trace `FILE`"},
			&cli.StringFlag{Name: "out", Value: "fray-shrunk.toml", Usage: "the smallest profile's `FILE`"},
		),
		Action:       runShrink,
		OnUsageError: usageError,
	}
}

// shrinkInput is what shrink reads from the failing run's trace.
type shrinkInput struct {
	text   []byte // the profile's TOML
	name   string
	seed   uint64
	run    sweep.Run
	target sweep.Outcome // the failure, when the trace alone shows it
	note   string        // what shrink left out of the trace, "" when nothing
}

func runShrink(c *cli.Context) error {
	path := c.String("reproduce")
	if path == "" {
		return usagef("shrink needs --reproduce TRACE, the trace of a failing run (fray run --trace FILE)")
	}
	if err := outputDirs(c, "out"); err != nil {
		return err
	}
	in, err := readShrinkInput(path)
	if err != nil {
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
	if in.note != "" {
		sayf(c, errw, "shrink: %s", in.note)
	}
	sh := &shrinker{c: c, rep: rep, in: in}
	all := make([]int, len(in.run.Firings))
	for i := range all {
		all[i] = i
	}
	full, err := sh.run(all)
	if err != nil {
		return err
	}
	if sh.in.target.Check == "" && full.IsFail() {
		sh.in.target = full
	}
	if !sh.same(full) {
		want := "again"
		if t := sh.in.target.Check; t != "" {
			want = t + " again"
		}
		return cli.Exit(fmt.Sprintf("verdict inconclusive: the %d firings of %s, each at its place, did not fail %s (%s); the failure may depend on timing, or the pair changed",
			len(in.run.Firings), path, want, full), exitInconclusive)
	}
	budget := c.Int("max-runs") - 1
	keep, runs, exhausted := sweep.Minimize(len(in.run.Firings), budget, func(s []int) bool {
		if sh.err != nil {
			return false
		}
		o, err := sh.run(s)
		if err != nil {
			sh.err = err
			return false
		}
		return sh.same(o)
	})
	if ctx.Err() != nil {
		return cli.Exit("interrupted: shrink stopped before the smallest set was found", exitInterrupted)
	}
	if sh.err != nil {
		return sh.err
	}
	return sh.report(keep, runs+1, exhausted)
}

// readShrinkInput reads the profile, the firings and the verdict of the
// trace at path.
func readShrinkInput(path string) (shrinkInput, error) {
	rd, err := trace.Open(path, trace.ReadOptions{Partial: true})
	if err != nil {
		return shrinkInput{}, badTrace(err)
	}
	defer rd.Close()
	h := rd.Header()
	in := shrinkInput{text: []byte(h.ProfileText), name: h.Profile, seed: h.Seed}
	if len(in.text) == 0 {
		return in, usagef("--reproduce %s: the trace holds no profile: nothing fired to shrink", path)
	}
	var rec sweep.Recorder
	observeAll(rd, &rec)
	in.run = rec.Run()
	if in.run.Changed {
		return in, usagef("--reproduce %s: the profile changed while that run went on (the admin API, a reload); shrink takes a run of one profile", path)
	}
	if len(in.run.Firings) == 0 {
		return in, usagef("--reproduce %s: no fault fired in that run: nothing to shrink", path)
	}
	if in.run.Truncated {
		in.note = fmt.Sprintf("the trace holds more firings than shrink keeps; it shrinks the first %d", len(in.run.Firings))
	}
	r, _, err := checkTrace(path, true)
	if err != nil {
		return in, err
	}
	// A trace does not record the client's exit: when no check failed,
	// the first rerun, with every firing, says what fails.
	if o := sweep.Decide(r); o.IsFail() {
		in.target = o
	}
	return in, nil
}

// shrinker reruns the client with subsets of the firings.
type shrinker struct {
	c   *cli.Context
	rep *repeater
	in  shrinkInput
	err error // the first run that could not be made
}

// profile is the profile that fires the firings of subset.
func (s *shrinker) profile(subset []int) ([]byte, error) {
	return s.in.run.Reduced(s.in.text, "shrunk-"+s.in.name, s.in.seed, subset)
}

// run runs the client with the firings of subset and returns the outcome.
func (s *shrinker) run(subset []int) (sweep.Outcome, error) {
	if err := s.rep.rc.soft.Err(); err != nil {
		return sweep.Outcome{}, fmt.Errorf("shrink: %w", err)
	}
	text, err := s.profile(subset)
	if err != nil {
		return sweep.Outcome{}, err
	}
	prof, err := profiles.Parse("shrunk.toml", bytes.NewReader(text))
	if err != nil {
		return sweep.Outcome{}, fmt.Errorf("shrink: the generated profile: %w", err)
	}
	r, err := s.rep.run(prof, "")
	if err != nil {
		return sweep.Outcome{}, err
	}
	o := sweep.Decide(r)
	sayf(s.c, s.rep.errw, "shrink: %d of %d firings: %s", len(subset), len(s.in.run.Firings), o.Short())
	return o, nil
}

// same reports whether o fails as the run being shrunk failed.
func (s *shrinker) same(o sweep.Outcome) bool {
	return o.IsFail() && o.Check == s.in.target.Check
}

// report prints the smallest profile, writes it to --out and says how to
// run it.
func (s *shrinker) report(keep []int, runs int, exhausted bool) error {
	text, err := s.profile(keep)
	if err != nil {
		return err
	}
	out := s.c.String("out")
	if err := os.WriteFile(out, text, 0o644); err != nil {
		return usagef("--out %s: %v", out, err)
	}
	placed, err := s.in.run.Placed(keep)
	if err != nil {
		return err
	}
	names := make([]string, len(placed))
	for i, f := range placed {
		names[i] = f.String()
	}
	errw := s.rep.errw
	sayf(s.c, errw, "shrink: %d of %d firings still fail %s, found in %d runs: %s",
		len(keep), len(s.in.run.Firings), s.in.target.Check, runs, strings.Join(names, "; "))
	if exhausted {
		sayf(s.c, errw, "shrink: --max-runs %d ran out first: a smaller set may still fail; raise --max-runs", s.c.Int("max-runs"))
	}
	if _, err := s.c.App.Writer.Write(text); err != nil {
		return err
	}
	fmt.Fprintf(s.c.App.Writer, "# written to %s; run it with:\n# %s\n", out, s.rep.runLine("--profile", out))
	return nil
}
