package scale

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/http/pprof"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	rpprof "runtime/pprof"
	"strconv"
	"time"

	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy"
	"github.com/frayproxy/fray/proxy/forward"
	"github.com/frayproxy/fray/proxy/trace"
)

// childFiles is the file limit a child asks for: two sockets per stream
// for a proxy, with room to spare.
const childFiles = 2*10_000 + 1024

// RunChild serves as the child the environment describes until stdin
// closes, and returns the process's exit code. Call it from TestMain when
// IsChild reports true.
func RunChild() int {
	if err := runChild(); err != nil {
		fmt.Fprintf(os.Stderr, "scale child %s: %v\n", os.Getenv(envChild), err)
		return 1
	}
	return 0
}

func runChild() error {
	if dir := os.Getenv("FRAY_SCALE_PPROF"); dir != "" {
		// Every allocation in the heap profile, not a sample: the figures
		// per stream are then exact (and the process a little larger).
		runtime.MemProfileRate = 1
	}
	if dir := os.Getenv("FRAY_SCALE_CPUPROFILE"); dir != "" {
		// The CPU profile of the child's whole life, in DIR/MODE.cpu
		// (without FRAY_SCALE_PPROF, whose exact heap profile costs more
		// than the proxy).
		stop, err := profileCPU(filepath.Join(dir, os.Getenv(envChild)+".cpu"))
		if err != nil {
			return err
		}
		defer stop()
	}
	if _, err := RaiseFileLimit(childFiles); err != nil {
		return err
	}
	cfg := ChildConfig{
		Mode: os.Getenv(envChild), Listen: os.Getenv(envListen), Upstream: os.Getenv(envUpstream),
		Profile: os.Getenv(envProfile), Trace: os.Getenv(envTrace), ReportEvery: os.Getenv(envReportEvery) == "1",
	}
	if s := os.Getenv(envSpeed); s != "" {
		speed, err := strconv.ParseFloat(s, 64)
		if err != nil || speed <= 0 {
			return fmt.Errorf("%s=%q: want a positive number", envSpeed, s)
		}
		cfg.Speed = speed
	}
	control := http.NewServeMux()
	control.HandleFunc("GET /stats", serveStats)
	control.Handle("GET /debug/pprof/{profile}", http.HandlerFunc(pprof.Index))
	serve, err := childServer(cfg, control)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listening on %q: %w", cfg.Listen, err)
	}
	host, _, _ := net.SplitHostPort(ln.Addr().String())
	cln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return fmt.Errorf("listening for control on %s: %w", host, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// The parent closing stdin (or dying) ends the child.
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	go func() { _ = forward.Serve(ctx, cln, control, nil, time.Second) }()
	fmt.Printf("ready %s %s\n", ln.Addr(), cln.Addr())
	return serve(ctx, ln)
}

// childServer builds what the child serves on its data address, and adds
// the mode's own control routes. The function it returns serves on ln
// until ctx ends.
func childServer(cfg ChildConfig, control *http.ServeMux) (func(ctx context.Context, ln net.Listener) error, error) {
	serveHandler := func(h http.Handler) func(context.Context, net.Listener) error {
		return func(ctx context.Context, ln net.Listener) error { return forward.Serve(ctx, ln, h, nil, time.Second) }
	}
	switch cfg.Mode {
	case ModeUpstream:
		u := NewUpstream()
		control.HandleFunc("POST /fire", func(w http.ResponseWriter, r *http.Request) {
			k, err := strconv.Atoi(r.URL.Query().Get("k"))
			if err != nil || k < 1 {
				http.Error(w, "want /fire?k=N, N >= 1", http.StatusBadRequest)
				return
			}
			u.Fire(k)
			writeJSON(w, "fired")
		})
		control.HandleFunc("GET /streams", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, u.Streams()) })
		return serveHandler(u), nil
	case ModeReverseProxy, ModeFray, ModeFloor:
		up, err := url.Parse(cfg.Upstream)
		if err != nil || up.Host == "" {
			return nil, fmt.Errorf("%s=%q: want the upstream's URL", envUpstream, cfg.Upstream)
		}
		if cfg.Mode == ModeReverseProxy {
			return serveHandler(newReverseProxy(up)), nil
		}
		if cfg.Mode == ModeFloor {
			return serveHandler(newFloor(up)), nil
		}
		eng, err := newFray(cfg, up, control)
		if err != nil {
			return nil, err
		}
		// As fray proxy serves: Serve, then the final verdict, which
		// ends the trace.
		return func(ctx context.Context, ln net.Listener) error {
			st := eng.Serve(ctx, ctx, ln, nil)
			_, err := eng.Finish(st, nil)
			return errors.Join(st.Err, err)
		}, nil
	}
	return nil, fmt.Errorf("%s=%q: unknown mode", envChild, cfg.Mode)
}

// newReverseProxy is httputil.ReverseProxy set up for SSE as its
// documentation asks (FlushInterval -1: flush after every write), with the
// same transport as fray's, so that the comparison is of the proxies and
// not of their connection pools.
func newReverseProxy(up *url.URL) http.Handler {
	rp := httputil.NewSingleHostReverseProxy(up)
	rp.FlushInterval = -1
	rp.Transport = forward.NewTransport(nil)
	return rp
}

// newFray is fray as `fray proxy --upstream URL --admin ADDR` runs it,
// its options assembled by proxy.ProxyOptions as that command assembles
// them: the verifier and the metrics always attached, the logger at info
// on stderr, the profile when one is named, and with cfg.Trace the trace
// written as --trace writes it. The control API serves the admin API's
// metrics at GET /metrics. With cfg.ReportEvery the verdict is made every
// minute of fray's clock, as `--report FILE --report-every 1m` has it made.
func newFray(cfg ChildConfig, up *url.URL, control *http.ServeMux) (*proxy.Engine, error) {
	cmd := proxy.ProxyCommand{
		Upstream:           up,
		RequestBodyTimeout: forward.DefaultRequestBodyTimeout, // the flag's default
		Admin:              true,
		Logger:             slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})),
	}
	if cfg.Profile != "" {
		prof, err := profiles.Builtin(cfg.Profile)
		if err != nil {
			return nil, err
		}
		cmd.Profile = prof
	}
	if cfg.Trace != "" {
		h := trace.Header{Started: time.Now()}
		if cmd.Profile != nil {
			h.Profile, h.Seed, h.ProfileText = cmd.Profile.Name, cmd.Profile.Seed, string(cmd.Profile.Text)
		}
		w, err := trace.Create(cfg.Trace, trace.WriterOptions{Header: h})
		if err != nil {
			return nil, err
		}
		cmd.Trace = w
	}
	opts := proxy.ProxyOptions(cmd)
	speed := 1.0
	if cfg.Speed > 0 && cfg.Speed != 1 {
		speed = cfg.Speed
		opts.Clock = newFastClock(speed)
	}
	eng, err := proxy.New(opts)
	if err != nil {
		return nil, err
	}
	control.Handle("GET /metrics", eng.AdminHandler())
	if cfg.ReportEvery {
		go func() {
			for range time.Tick(time.Duration(float64(time.Minute) / speed)) {
				_ = json.NewEncoder(io.Discard).Encode(eng.Report())
			}
		}()
	}
	return eng, nil
}

// profileCPU starts the CPU profile, written to file once stop is called,
// and records contention on mutexes, written then to file+".mutex".
func profileCPU(file string) (stop func(), err error) {
	f, err := os.Create(file)
	if err != nil {
		return nil, err
	}
	if err := rpprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	runtime.SetMutexProfileFraction(10)
	return func() {
		rpprof.StopCPUProfile()
		f.Close()
		if m, err := os.Create(file + ".mutex"); err == nil {
			_ = rpprof.Lookup("mutex").WriteTo(m, 0)
			m.Close()
		}
	}, nil
}

// serveStats answers the child's Stats, after a collection with ?gc=1.
func serveStats(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, ReadStats(r.URL.Query().Get("gc") == "1"))
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// fastClock is a forward.Clock that runs speed times faster than real time
// from its creation: the fault schedule, delays and timers all move that
// much faster.
type fastClock struct {
	base  time.Time
	speed float64
}

func newFastClock(speed float64) *fastClock { return &fastClock{base: time.Now(), speed: speed} }

func (c *fastClock) Now() time.Time {
	return c.base.Add(time.Duration(float64(time.Since(c.base)) * c.speed))
}

func (c *fastClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(time.Duration(float64(d)/c.speed), f).Stop
}
