package main

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy"
	"github.com/frayproxy/fray/proxy/report"
	"github.com/frayproxy/fray/proxy/trace"
)

// repeatFlags are the flags of the commands that run the client command
// many times, each through a fresh engine: fray sweep and fray shrink.
func repeatFlags(maxRuns int) []cli.Flag {
	return append(append(clientFlags(&cli.BoolFlag{Name: "fresh-server", Usage: "restart the --server for every run"}),
		&cli.IntFlag{Name: "max-runs", Value: maxRuns, Usage: "run the client at most `N` times"},
		&cli.BoolFlag{Name: "log-faults", Usage: "log every fault decision"},
	), logFlags()...)
}

// repeater runs the client command again and again, each time through a
// new engine with a profile, in front of one upstream: a --server started
// once, or for every run with --fresh-server.
type repeater struct {
	c     *cli.Context
	rc    runCtx
	set   runSettings
	errw  io.Writer
	fresh bool
	srv   *serverProc
}

// repeatSettings checks the flags of repeatFlags.
func repeatSettings(c *cli.Context) (runSettings, error) {
	set, err := runFlags(c)
	if err != nil {
		return set, err
	}
	if c.Int("max-runs") < 1 {
		return set, usagef("--max-runs %d: must be at least 1", c.Int("max-runs"))
	}
	if c.Bool("fresh-server") && c.String("server") == "" {
		return set, usagef("--fresh-server restarts the --server; give --server CMD too")
	}
	return set, nil
}

// outputDirs checks, before any run, that the directory of each file
// flag given exists, so that a long sweep or shrink does not end unable
// to write what it found.
func outputDirs(c *cli.Context, flags ...string) error {
	for _, f := range flags {
		path := c.String(f)
		if path == "" || path == "-" {
			continue
		}
		if st, err := os.Stat(filepath.Dir(path)); err != nil || !st.IsDir() {
			return usagef("--%s %s: its directory %s does not exist; create it or give another path", f, path, filepath.Dir(path))
		}
	}
	return nil
}

// newRepeater reads the shared flags; stop it when done.
func newRepeater(c *cli.Context, rc runCtx, errw io.Writer) (*repeater, error) {
	set, err := repeatSettings(c)
	if err != nil {
		return nil, err
	}
	return &repeater{c: c, rc: rc, set: set, errw: errw, fresh: c.Bool("fresh-server")}, nil
}

// stop ends the server, if one runs.
func (r *repeater) stop() {
	r.srv.stop()
	r.srv = nil
}

// run runs the client once through an engine with prof (nil: none),
// recording the traffic to tracePath when it is not "", and returns the
// run's report.
func (r *repeater) run(prof *profiles.Profile, tracePath string) (report.Report, error) {
	opts := proxy.Options{Upstream: r.set.origin, Drain: proxy.ProxyDrain}
	if tracePath != "" {
		w, err := trace.Create(tracePath, trace.WriterOptions{Header: traceHeader(prof, seedOf(prof, nil))})
		if err != nil {
			return report.Report{}, err
		}
		opts.Trace = w
	}
	eng, _, err := startEngine(r.c, r.errw, opts, prof, nil)
	if err != nil {
		return report.Report{}, err
	}
	ln, err := listenBeside(net.Listen, r.c.String("listen"), r.set.endpoint)
	if err != nil {
		_ = eng.Abort()
		return report.Report{}, usagef("--listen %q: %v", r.c.String("listen"), err)
	}
	defer ln.Close()
	if err := r.ready(); err != nil {
		_ = eng.Abort()
		return report.Report{}, err
	}
	frayURL := r.set.frayURL(ln.Addr())
	var res clientResult
	// The client's output goes to stderr: stdout holds the command's own.
	sv := eng.ServeWhile(r.rc.soft, r.rc.hard, ln, r.set.settle, func() {
		res = runClient(r.rc.soft, r.set.client, frayURL, r.c.App.Reader, r.errw, r.errw)
	})
	if r.fresh {
		r.stop()
	}
	return finishRun(r.c, r.errw, eng, sv, r.set.client, res), nil
}

// ready starts the server when none runs, as fray run does (refusing an
// address another process already holds), and waits for the upstream.
func (r *repeater) ready() error {
	say := func(f string, a ...any) { sayf(r.c, r.errw, f, a...) }
	if r.srv != nil {
		return waitReady(r.rc.soft, r.set.endpoint, r.set.wait, r.srv, say)
	}
	srv, err := startUpstream(r.rc.soft, r.c.String("server"), r.set, r.errw, say)
	r.srv = srv
	return err
}

// runLine is the fray run command that runs the client in front of the
// same upstream with extra, the arguments that choose the faults.
func (r *repeater) runLine(extra ...string) string {
	words := []string{"fray", "run", "--upstream", r.set.endpoint.String()}
	if line := r.c.String("server"); line != "" {
		words = append(words, "--server", line)
	}
	words = append(append(append(words, extra...), "--"), r.set.client...)
	for i, w := range words {
		words[i] = shellWord(w)
	}
	return strings.Join(words, " ")
}

// shellWord quotes w for sh when it holds anything but plain characters.
func shellWord(w string) string {
	if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@,+%") == "" {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}
