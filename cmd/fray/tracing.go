package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy"
	"github.com/frayproxy/fray/proxy/report"
	"github.com/frayproxy/fray/proxy/timeline"
	"github.com/frayproxy/fray/proxy/trace"
)

// traceFlags are the options of the commands that can record a trace.
func traceFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "trace", Usage: "record the traffic to `FILE` (.gz: gzip)"},
		&cli.StringSliceFlag{Name: "redact-header", Usage: "also redact header `NAME`; repeatable"},
		&cli.BoolFlag{Name: "no-redact", Usage: "keep secret headers in the trace"},
		&cli.StringFlag{Name: "html", Usage: "draw the timeline page to `FILE` at the end"},
	}
}

// timelineOut is what --html asks for: the run's timeline, drawn from its
// trace when fray stops. The zero value draws nothing.
type timelineOut struct {
	page  string // --html
	trace string // the trace it is drawn from
	temp  bool   // the trace is a temporary file, removed once drawn
}

// write draws the timeline, if one was asked for, and says where it went.
func (t timelineOut) write(errw io.Writer) error {
	if t.page == "" {
		return nil
	}
	if t.temp {
		defer os.Remove(t.trace)
	}
	in, err := timelineInput(t.trace, false)
	if err != nil {
		return err
	}
	if err := report.WriteFile(t.page, func(w io.Writer) error { return timeline.Write(w, in) }); err != nil {
		return err
	}
	fmt.Fprintf(errw, "fray: timeline of the run written to %s (open it in a browser)\n", t.page)
	return nil
}

// openTrace starts the trace --trace asks for, or a temporary one for
// --html alone, headed by the profile in force at the start (nil: none)
// and its seed; nil without either. It returns what --html asks for.
func openTrace(c *cli.Context, prof *profiles.Profile, seed uint64) (proxy.Trace, timelineOut, error) {
	path := c.String("trace")
	page := timelineOut{page: c.String("html"), trace: path}
	if path == "" && page.page != "" {
		f, err := os.CreateTemp("", "fray-*.jsonl")
		if err != nil {
			return nil, timelineOut{}, fmt.Errorf("--html %s: a trace to draw it from: %w", page.page, err)
		}
		f.Close()
		path, page.trace, page.temp = f.Name(), f.Name(), true
	}
	if path == "" {
		if c.IsSet("redact-header") || c.IsSet("no-redact") {
			return nil, timelineOut{}, usagef("--redact-header and --no-redact say what goes into a trace; give --trace FILE too")
		}
		return nil, timelineOut{}, nil
	}
	w, err := trace.Create(path, trace.WriterOptions{Header: traceHeader(prof, seed), RedactHeaders: c.StringSlice("redact-header"), NoRedact: c.Bool("no-redact")})
	if err != nil {
		if page.temp {
			os.Remove(path)
		}
		return nil, timelineOut{}, usagef("--trace %s: %v", path, err)
	}
	return w, page, nil
}

// runProfile is the fault plan of fray run: --reproduce TRACE takes the
// profile, its seed and every change made while the recorded run went on,
// so that the same client and server meet the same faults again;
// otherwise --profile and --seed.
func runProfile(c *cli.Context) (*profiles.Profile, *uint64, []proxy.Change, error) {
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
	prof, changes, err := proxy.Reproduce(rd)
	if err != nil {
		return nil, nil, nil, usagef("--reproduce %s: %v", path, err)
	}
	return prof, nil, changes, nil
}

// traceHeader heads a trace recorded now under prof (nil: none) with seed.
func traceHeader(prof *profiles.Profile, seed uint64) trace.Header {
	h := trace.Header{Started: time.Now()}
	if prof != nil {
		h.Profile, h.Seed, h.ProfileText = prof.Name, seed, string(prof.Text)
	}
	return h
}
