package main

import (
	"time"

	"github.com/urfave/cli/v2"

	"github.com/frayproxy/fray/engine"
	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy/trace"
)

// traceFlags are the options of the commands that can record a trace.
func traceFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "trace", Usage: "record every observation to `FILE` as JSON Lines (gzip when it ends in .gz), for fray check, fray report and fray replay"},
		&cli.StringSliceFlag{Name: "redact-header", Usage: "also redact header `NAME` in the trace (Authorization, Cookie, Set-Cookie and Proxy-Authorization always are); repeatable"},
		&cli.BoolFlag{Name: "no-redact", Usage: "keep every header value in the trace, secrets included"},
	}
}

// openTrace starts the trace --trace asks for, headed by the profile in
// force at the start (nil: none) and its seed; nil without --trace.
func openTrace(c *cli.Context, prof *profiles.Profile, seed uint64) (engine.Trace, error) {
	path := c.String("trace")
	if path == "" {
		if c.IsSet("redact-header") || c.IsSet("no-redact") {
			return nil, usagef("--redact-header and --no-redact say what goes into a trace; give --trace FILE too")
		}
		return nil, nil
	}
	h := trace.Header{Started: time.Now()}
	if prof != nil {
		h.Profile, h.Seed, h.ProfileText = prof.Name, seed, string(prof.Text)
	}
	w, err := trace.Create(path, trace.WriterOptions{Header: h, RedactHeaders: c.StringSlice("redact-header"), NoRedact: c.Bool("no-redact")})
	if err != nil {
		return nil, usagef("--trace %s: %v", path, err)
	}
	return w, nil
}

// runProfile is the fault plan of fray run: --reproduce TRACE takes the
// profile, its seed and every change made while the recorded run went on,
// so that the same client and server meet the same faults again;
// otherwise --profile and --seed.
func runProfile(c *cli.Context) (*profiles.Profile, *uint64, []engine.Change, error) {
	path := c.String("reproduce")
	if path == "" {
		prof, seed, err := profileOption(c)
		return prof, seed, nil, err
	}
	if c.IsSet("profile") || c.IsSet("seed") {
		return nil, nil, nil, usagef("--reproduce %s takes the profile and seed from the trace; drop --profile and --seed", path)
	}
	rd, err := trace.Open(path, trace.ReadOptions{Partial: true})
	if err != nil {
		return nil, nil, nil, badTrace(err)
	}
	defer rd.Close()
	prof, changes, err := engine.Reproduce(rd)
	if err != nil {
		return nil, nil, nil, usagef("--reproduce %s: %v", path, err)
	}
	return prof, nil, changes, nil
}
