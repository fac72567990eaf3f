// Command perf measures fray where its users feel it, and prints five
// figures against their budgets:
//
//  1. in front of the official Go SDK server streaming progress
//     notifications as fast as it can, to the Go SDK client: events/s at
//     least 0.95× direct, and fray's CPU per event at most Toxiproxy's;
//  2. one event per upstream write, paced: fray's added p50 latency at
//     most 1.2× httputil.ReverseProxy's;
//  3. 10,000 idle streams: fray's memory per stream at most
//     ReverseProxy's;
//  4. bulk, 1,000 events per write: fray's CPU per event at most 8×
//     ReverseProxy's;
//  5. a soak with sessions coming and going: fray's live heap after the
//     warm-up flat within 1 MiB an hour (judged from a 30-minute soak).
//
// fray is the binary as shipped (go build ./cmd/fray), run as `fray proxy
// --upstream URL --listen 127.0.0.1:0`; ReverseProxy is this program run
// again as a plain httputil.ReverseProxy; Toxiproxy 2.x is built with go
// install into a temporary directory and given one proxy, no toxic,
// through its HTTP API. Each proxy runs in a process of its own, its CPU
// and memory read from /proc (Linux only); the upstreams and the clients
// run in this one. The setups take turns round by round.
//
//	go run ./proxy/internal/perf                 # all five, a 60 s soak
//	go run ./proxy/internal/perf -soak 30m       # the judged soak
//	go run ./proxy/internal/perf -figures 1,4    # some of them
//
// It exits 1 when a budget is missed or the measurement fails, 2 on bad
// flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/frayproxy/fray/examples/gosdk/refpeer"
	"github.com/frayproxy/fray/proxy/internal/benchsse"
	"github.com/frayproxy/fray/proxy/internal/scale"
)

// toxiproxyModule is the Toxiproxy server built when -toxiproxy is not
// given: a tool, never a dependency of fray's module.
const toxiproxyModule = "github.com/Shopify/toxiproxy/v2/cmd/server@v2.12.0"

// config is what the flags ask for.
type config struct {
	figures      map[int]bool
	rounds       int
	floodEvents  int
	pacedEvents  int
	pace         time.Duration
	bulkEvents   int
	streams      int
	soak         time.Duration
	frayBin      string
	toxiproxyBin string
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == reverseProxyArg {
		if err := serveReverseProxy(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if err != nil {
		os.Exit(2)
	}
	if runtime.GOOS != "linux" {
		fmt.Println("perf: skipped: each proxy's CPU and memory are read from /proc, which this system (" + runtime.GOOS + ") has not")
		return
	}
	misses, err := run(context.Background(), cfg, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if misses > 0 {
		fmt.Printf("%d budget(s) missed\n", misses)
		os.Exit(1)
	}
}

// parseFlags reads the flags; a bad one is reported on errw.
func parseFlags(args []string, errw io.Writer) (config, error) {
	fs := flag.NewFlagSet("perf", flag.ContinueOnError)
	fs.SetOutput(errw)
	cfg := config{}
	figures := fs.String("figures", "1,2,3,4,5", "which `LIST` of figures to measure, e.g. 1,4")
	fs.IntVar(&cfg.rounds, "rounds", 5, "rounds of each setup, taken in turn, for figures 1, 2 and 4")
	fs.IntVar(&cfg.floodEvents, "flood-events", 50_000, "progress notifications a round, figure 1")
	fs.IntVar(&cfg.pacedEvents, "paced-events", 2_000, "events a round, figure 2")
	fs.DurationVar(&cfg.pace, "pace", 500*time.Microsecond, "time between events, figure 2")
	fs.IntVar(&cfg.bulkEvents, "bulk-events", 1_000_000, "events a round, figure 4")
	fs.IntVar(&cfg.streams, "streams", 10_000, "idle streams, figure 3 (lowered to what RLIMIT_NOFILE allows)")
	fs.DurationVar(&cfg.soak, "soak", time.Minute, "how long the soak runs, figure 5; judged from "+soakFull.String())
	fs.StringVar(&cfg.frayBin, "fray", "", "the fray `BINARY` to measure (default: built from this module)")
	fs.StringVar(&cfg.toxiproxyBin, "toxiproxy", "", "the toxiproxy server `BINARY` (default: go install "+toxiproxyModule+")")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	var err error
	if cfg.figures, err = parseFigures(*figures); err != nil {
		fmt.Fprintln(errw, err)
		return cfg, err
	}
	for _, v := range []struct {
		name string
		n    int
	}{{"rounds", cfg.rounds}, {"flood-events", cfg.floodEvents}, {"paced-events", cfg.pacedEvents},
		{"bulk-events", cfg.bulkEvents}, {"streams", cfg.streams}} {
		if v.n < 1 {
			err = fmt.Errorf("perf: -%s %d: want 1 or more", v.name, v.n)
			fmt.Fprintln(errw, err)
			return cfg, err
		}
	}
	if cfg.pace <= 0 || cfg.soak <= 0 {
		err = fmt.Errorf("perf: -pace %v, -soak %v: want durations above 0", cfg.pace, cfg.soak)
		fmt.Fprintln(errw, err)
	}
	return cfg, err
}

// parseFigures reads a list such as "1,4" of figures 1 to 5.
func parseFigures(list string) (map[int]bool, error) {
	out := map[int]bool{}
	for f := range strings.SplitSeq(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 5 {
			return nil, fmt.Errorf("perf: -figures %q: %q is not a figure; want numbers 1 to 5, e.g. 1,4", list, f)
		}
		out[n] = true
	}
	return out, nil
}

// run measures the figures cfg asks for, prints them on w and returns
// how many budgets were missed.
func run(ctx context.Context, cfg config, w io.Writer) (int, error) {
	fmt.Fprintf(w, "machine: %s\n", machine())
	steal0, stealOK := benchsse.HostSteal()
	start := time.Now()
	tmp, err := os.MkdirTemp("", "fray-perf-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	if cfg.frayBin == "" {
		if cfg.frayBin, err = buildFray(ctx, tmp); err != nil {
			return 0, err
		}
	}
	var figs []figure
	if cfg.figures[1] || cfg.figures[2] || cfg.figures[4] {
		if cfg.toxiproxyBin == "" {
			if cfg.toxiproxyBin, err = buildToxiproxy(ctx, tmp); err != nil {
				return 0, err
			}
		}
		f, err := streamFigures(ctx, cfg)
		if err != nil {
			return 0, err
		}
		figs = append(figs, f...)
	}
	if cfg.figures[3] {
		n, err := streamLimit(cfg.streams, w)
		if err != nil {
			return 0, err
		}
		f, err := idleFigure(ctx, cfg.frayBin, n)
		if err != nil {
			return 0, err
		}
		figs = append(figs, f)
	}
	if cfg.figures[5] {
		f, err := soakFigure(ctx, cfg.frayBin, cfg.soak, w)
		if err != nil {
			return 0, err
		}
		figs = append(figs, f...)
	}
	fmt.Fprintln(w)
	// In the budgets' order: figure 3 is measured after 4.
	slices.SortStableFunc(figs, func(a, b figure) int { return strings.Compare(a.Name[:2], b.Name[:2]) })
	misses := writeFigures(w, figs)
	took := time.Since(start)
	fmt.Fprintf(w, "\ntook %v; load average now %s", took.Round(time.Second), loadAverage())
	if steal1, ok := benchsse.HostSteal(); ok && stealOK {
		fmt.Fprintf(w, "; the host took %.1f%% of this machine's CPU time meanwhile (steal)", benchsse.StealPercent(steal1-steal0, took))
	}
	fmt.Fprintln(w)
	return misses, nil
}

// streamFigures measures figures 1, 2 and 4 (those cfg asks for) through
// one fray, one ReverseProxy and one Toxiproxy in front of one upstream.
func streamFigures(ctx context.Context, cfg config) ([]figure, error) {
	up := benchsse.NewUpstreamBeside(refpeer.NewFloodHandler())
	defer up.Close()
	hostPort := strings.TrimPrefix(up.URL, "http://")
	setups := []setup{{name: direct, base: up.URL}}
	starts := []struct {
		name  string
		start func() (*proc, error)
	}{
		{fray, func() (*proc, error) { return startFray(ctx, cfg.frayBin, up.URL) }},
		{reverseProxy, func() (*proc, error) { return startReverseProxy(ctx, up.URL) }},
		{toxiproxy, func() (*proc, error) { return startToxiproxy(ctx, cfg.toxiproxyBin, hostPort) }},
	}
	for _, s := range starts {
		p, err := s.start()
		if err != nil {
			return nil, err
		}
		defer p.stop()
		setups = append(setups, setup{name: s.name, base: "http://" + p.addr, proc: p})
	}
	var figs []figure
	if cfg.figures[1] {
		f, err := floodFigures(ctx, setups, cfg.rounds, cfg.floodEvents)
		if err != nil {
			return nil, err
		}
		figs = append(figs, f...)
	}
	if cfg.figures[2] {
		f, err := pacedFigure(ctx, up, setups, cfg.rounds, cfg.pacedEvents, cfg.pace)
		if err != nil {
			return nil, err
		}
		figs = append(figs, f)
	}
	if cfg.figures[4] {
		f, err := bulkFigure(ctx, up, setups[1:], cfg.rounds, cfg.bulkEvents)
		if err != nil {
			return nil, err
		}
		figs = append(figs, f)
	}
	return figs, nil
}

// streamLimit is want, lowered to what RLIMIT_NOFILE allows this process
// (a socket per stream for the client and one for the upstream) and the
// proxies, which inherit its limit (two per stream); it says so when it
// lowers it.
func streamLimit(want int, w io.Writer) (int, error) {
	const spare = 256
	lim, err := scale.RaiseFileLimit(uint64(2*want + spare))
	if err != nil {
		return 0, err
	}
	if room := (int(lim) - spare) / 2; room < want {
		fmt.Fprintf(w, "RLIMIT_NOFILE is %d here and cannot be raised (no CAP_SYS_RESOURCE): two sockets per stream, so %d idle streams, not %d\n", lim, room, want)
		return room, nil
	}
	return want, nil
}

// buildFray builds ./cmd/fray of the module this runs in into dir.
func buildFray(ctx context.Context, dir string) (string, error) {
	root, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	mod := strings.TrimSpace(string(root))
	if err != nil || mod == "" || mod == os.DevNull {
		return "", errors.New("perf: not inside fray's module: run it from the repository, or give -fray BINARY")
	}
	bin := filepath.Join(dir, "fray")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/fray")
	cmd.Dir = filepath.Dir(mod)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("perf: go build ./cmd/fray: %w\n%s", err, out)
	}
	return bin, nil
}

// buildToxiproxy installs Toxiproxy's server into dir with go install,
// through the Go module proxy, apart from fray's module.
func buildToxiproxy(ctx context.Context, dir string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "install", toxiproxyModule)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("perf: go install %s (or give -toxiproxy BINARY): %w\n%s", toxiproxyModule, err, out)
	}
	return filepath.Join(dir, "server"), nil
}
