package main

import (
	"errors"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy"
	"github.com/frayproxy/fray/proxy/trace"
)

// profileFlags are --profile and --seed, with the profile's default.
func profileFlags(def string) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "profile", Value: def, Usage: "profile `NAME` or file"},
		&cli.Uint64Flag{Name: "seed", DefaultText: "the profile's seed", Usage: "random seed `N`"},
	}
}

// profileFrom resolves the profile name given to flag (a built-in or a
// file), and --seed; want, when not empty, says what else flag takes, for
// the error. The profile is compiled once here, so that a bad one is
// reported before anything starts.
func profileFrom(c *cli.Context, flag, name, want string) (*profiles.Profile, *uint64, error) {
	prof, err := profiles.Resolve(name)
	if errors.Is(err, profiles.ErrUnknownProfile) {
		return nil, nil, usagef("%s %s: %s", flag, name, strings.TrimPrefix(err.Error(), "profiles: "))
	}
	if err != nil {
		if want != "" {
			return nil, nil, usagef("%s %s: %s\n%v", flag, name, want, err)
		}
		return nil, nil, usagef("%s %s:\n%v", flag, name, err)
	}
	var seed *uint64
	if c.IsSet("seed") {
		s := c.Uint64("seed")
		seed = &s
	}
	if _, err := profiles.NewActive(prof, seed); err != nil {
		return nil, nil, usagef("%s %s: %v", flag, name, err)
	}
	return prof, seed, nil
}

// profileOption resolves --profile and --seed: nil when no profile is
// given.
func profileOption(c *cli.Context) (*profiles.Profile, *uint64, error) {
	name := c.String("profile")
	if name == "" {
		if c.IsSet("seed") {
			return nil, nil, usagef("--seed %d: there is no --profile to seed", c.Uint64("seed"))
		}
		return nil, nil, nil
	}
	return profileFrom(c, "--profile", name, "")
}

// seedOf is the seed a profile runs with: the override, else its own.
func seedOf(p *profiles.Profile, seed *uint64) uint64 {
	switch {
	case seed != nil:
		return *seed
	case p != nil:
		return p.Seed
	}
	return 0
}

// startEngine builds the engine of opts, which hold the command's own
// settings, completed with what every command that runs an engine shares:
// the profile and its seed, the logger (on errw), --log-faults, and the
// command's --trace headed by the profile, opened last, once every flag
// was found good. On error a trace already in opts is ended.
func startEngine(c *cli.Context, errw io.Writer, opts proxy.Options, prof *profiles.Profile, seed *uint64) (*proxy.Engine, timelineOut, error) {
	log, err := newLogger(c, errw)
	var page timelineOut
	if err == nil && lookupFlag(c.Command, "trace") != nil {
		opts.Trace, page, err = openTrace(c, prof, seedOf(prof, seed))
	}
	if err != nil {
		if opts.Trace != nil {
			_ = opts.Trace.Finish(trace.End{})
		}
		return nil, timelineOut{}, err
	}
	opts.Profile, opts.Seed, opts.Logger, opts.LogFaults = prof, seed, log, c.Bool("log-faults")
	eng, err := newEngine(opts)
	return eng, page, err
}

// newEngine builds the engine of opts; on error the trace it would have
// written is ended, so that no file is left without its end line.
func newEngine(opts proxy.Options) (*proxy.Engine, error) {
	eng, err := proxy.New(opts)
	if err != nil {
		if opts.Trace != nil {
			_ = opts.Trace.Finish(trace.End{})
		}
		return nil, usagef("%v", err)
	}
	return eng, nil
}
