package main

import (
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
