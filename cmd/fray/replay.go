package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy"
	"github.com/frayproxy/fray/proxy/admin"
	"github.com/frayproxy/fray/proxy/forward"
	"github.com/frayproxy/fray/proxy/trace"
	"github.com/frayproxy/fray/proxy/trace/replay"
)

func replayCommand() *cli.Command {
	return &cli.Command{
		Name:  "replay",
		Usage: "stand in for the recorded server of a trace, for a live client",
		UsageText: "fray replay TRACE [--listen ADDR] [--speed N] [--faults MODE]\n\n" +
			"example:\n   fray replay run.jsonl.gz --listen 127.0.0.1:7070\n" +
			"   (then point the client at http://127.0.0.1:7070/mcp)\n\n" +
			"--faults recorded: what the client got live, fault effects included (default)\n" +
			"--faults none:     what the server sent, no fault applied\n" +
			"--faults PROFILE:  what the server sent, through fray with another profile",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "listen", Value: "127.0.0.1:7070", Usage: "listen on `ADDR`"},
			&cli.Float64Flag{Name: "speed", Value: 1, Usage: "play `N` times as fast; 0: no waiting"},
			&cli.StringFlag{Name: "faults", Value: "recorded", Usage: "recorded, none or a profile"},
			&cli.Uint64Flag{Name: "seed", DefaultText: "the profile's seed", Usage: "random seed `N`"},
			&cli.BoolFlag{Name: "partial", Usage: "replay what a truncated trace holds"},
		}, logFlags()...),
		Action:       runReplay,
		OnUsageError: usageError,
	}
}

func runReplay(c *cli.Context) error {
	path, err := traceArg(c, "replay needs the trace file of a run: fray replay TRACE (record one with --trace FILE on fray proxy, run or demo)",
		"replay takes one trace file")
	if err != nil {
		return err
	}
	log, err := newLogger(c, c.App.ErrWriter)
	if err != nil {
		return err
	}
	speed := c.Float64("speed")
	if speed < 0 {
		return usagef("--speed %v: must be 0 (no waiting) or more", speed)
	}
	tr, err := trace.ReadFile(path, trace.ReadOptions{Partial: c.Bool("partial")})
	if err != nil {
		return badTrace(err)
	}
	if tr.Truncation != nil {
		sayf(c, c.App.ErrWriter, "trace %s is truncated: %s", path, tr.Truncation)
	}
	opts := replay.Options{Observations: tr.Observations, Speed: speed, NoWait: speed == 0, Logger: log}
	var prof *profiles.Profile
	var seed *uint64
	switch f := c.String("faults"); f {
	case "recorded":
	case "none":
		opts.Mode = replay.ModeServer
	default:
		opts.Mode = replay.ModeServer
		if prof, seed, err = profileFrom(c, "--faults", f, "want recorded, none, or a profile:"); err != nil {
			return err
		}
	}
	rs, err := replay.New(opts)
	if err != nil {
		return usagef("%v", err)
	}
	ctx, _, stop := stopSignals(c.Context, c.App.ErrWriter)
	defer stop()
	// Streams held open as they were in the recording end with the run.
	defer context.AfterFunc(ctx, rs.Close)()
	var h http.Handler = rs
	if prof != nil {
		var wait func()
		if h, wait, err = behindFray(ctx, rs, proxy.Options{Profile: prof, Seed: seed, Logger: log}); err != nil {
			return err
		}
		defer wait()
	}
	ln, err := net.Listen("tcp", admin.Addr(c.String("listen")))
	if err != nil {
		return usagef("--listen %q: %v", c.String("listen"), err)
	}
	defer ln.Close()
	sayf(c, c.App.ErrWriter, "replaying %s (%d observations, faults %s) on http://%s",
		path, len(tr.Observations), c.String("faults"), ln.Addr())
	err = forward.Serve(ctx, ln, h, nil, 2*time.Second)
	st := rs.Stats()
	sayf(c, c.App.ErrWriter, "replay answered %d requests from the trace (%d unmatched), %d events; Last-Event-IDs received: %q",
		st.Matched, st.Unmatched, st.Events, st.Resumes)
	return err
}

// behindFray serves rs on a loopback port of its own until ctx ends and
// returns a fray engine in front of it with opts' profile: the same fault
// code as a live run, acting on what the server sent. wait returns once
// the inner server has stopped, stopping it if ctx has not ended.
func behindFray(ctx context.Context, rs *replay.Server, opts proxy.Options) (h http.Handler, wait func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, fmt.Errorf("replay: listen for the recorded server: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = forward.Serve(ctx, ln, rs, nil, time.Second)
	}()
	opts.Upstream = &url.URL{Scheme: "http", Host: ln.Addr().String()}
	eng, err := proxy.New(opts)
	if err != nil {
		cancel()
		<-done
		return nil, nil, err
	}
	return eng.Handler(), func() { cancel(); <-done }, nil
}
