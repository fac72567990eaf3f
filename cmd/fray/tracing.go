package main

import (
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy/observe"
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

// openTrace starts the trace --trace asks for. It returns the observer to
// hand the engine (nil without --trace) and the function that writes the
// end line and closes the file; end may be called more than once, the
// first call counts.
func openTrace(c *cli.Context, active *profiles.Active) (observe.Observer, func(trace.End) error, error) {
	path := c.String("trace")
	if path == "" {
		if c.IsSet("redact-header") || c.IsSet("no-redact") {
			return nil, nil, usagef("--redact-header and --no-redact say what goes into a trace; give --trace FILE too")
		}
		return nil, func(trace.End) error { return nil }, nil
	}
	h := trace.Header{Started: time.Now()}
	if active != nil {
		p := active.Profile()
		h.Profile, h.Seed, h.ProfileText = p.Name, active.Seed(), string(p.Text)
	}
	w, err := trace.Create(path, trace.WriterOptions{Header: h, RedactHeaders: c.StringSlice("redact-header"), NoRedact: c.Bool("no-redact")})
	if err != nil {
		return nil, nil, usagef("--trace %s: %v", path, err)
	}
	return w, w.Finish, nil
}

// runProfile is the fault plan of fray run: --reproduce TRACE takes the
// profile and seed a trace recorded, so that the same client and server
// meet the same faults again; otherwise --profile and --seed.
func runProfile(c *cli.Context) (*profiles.Active, error) {
	path := c.String("reproduce")
	if path == "" {
		return loadActive(c)
	}
	if c.IsSet("profile") || c.IsSet("seed") {
		return nil, usagef("--reproduce %s takes the profile and seed from the trace; drop --profile and --seed", path)
	}
	rd, err := trace.Open(path, trace.ReadOptions{Partial: true})
	if err != nil {
		return nil, badTrace(err)
	}
	h := rd.Header()
	rd.Close()
	if h.ProfileText == "" {
		if h.Profile != "" {
			return nil, usagef("--reproduce %s: the trace names profile %q but does not hold its text", path, h.Profile)
		}
		return nil, nil
	}
	prof, err := profiles.Parse(h.Profile+".toml", strings.NewReader(h.ProfileText))
	if err != nil {
		return nil, usagef("--reproduce %s: the profile it records does not parse:\n%v", path, err)
	}
	seed := h.Seed
	active, err := profiles.NewActive(prof, &seed)
	if err != nil {
		return nil, usagef("--reproduce %s: %v", path, err)
	}
	return active, nil
}
