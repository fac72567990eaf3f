package scale

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/http/pprof"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/frayproxy/fray/engine"
	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy"
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
	if os.Getenv("FRAY_SCALE_PPROF") != "" {
		// Every allocation in the heap profile, not a sample: the figures
		// per stream are then exact (and the process a little larger).
		runtime.MemProfileRate = 1
	}
	if _, err := RaiseFileLimit(childFiles); err != nil {
		return err
	}
	cfg := ChildConfig{
		Mode: os.Getenv(envChild), Listen: os.Getenv(envListen), Upstream: os.Getenv(envUpstream),
		Profile: os.Getenv(envProfile), Observe: os.Getenv(envObserve) == "1",
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
	h, err := childHandler(cfg, control)
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
	go func() { _ = proxy.Serve(ctx, cln, control, nil, time.Second) }()
	fmt.Printf("ready %s %s\n", ln.Addr(), cln.Addr())
	return proxy.Serve(ctx, ln, h, nil, time.Second)
}

// childHandler builds what the child serves on its data address, and adds
// the mode's own control routes.
func childHandler(cfg ChildConfig, control *http.ServeMux) (http.Handler, error) {
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
		return u, nil
	case ModeReverseProxy, ModeFray:
		up, err := url.Parse(cfg.Upstream)
		if err != nil || up.Host == "" {
			return nil, fmt.Errorf("%s=%q: want the upstream's URL", envUpstream, cfg.Upstream)
		}
		if cfg.Mode == ModeReverseProxy {
			return newReverseProxy(up), nil
		}
		return newFray(cfg, up, control)
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
	rp.Transport = proxy.NewTransport(nil)
	return rp
}

// newFray is fray as `fray proxy` runs it: the engine, its verifier
// always attached, and the profile when one is named. With Observe, the
// metrics watch every observation as they do under `fray proxy --admin`,
// the verdict is made every minute of fray's clock as `--report-every 1m`
// has it made, and the control API serves the metrics at GET /metrics.
func newFray(cfg ChildConfig, up *url.URL, control *http.ServeMux) (http.Handler, error) {
	opts := engine.Options{Upstream: up, Metrics: cfg.Observe}
	if cfg.Profile != "" {
		prof, err := profiles.Builtin(cfg.Profile)
		if err != nil {
			return nil, err
		}
		opts.Profile = prof
	}
	speed := 1.0
	if cfg.Speed > 0 && cfg.Speed != 1 {
		speed = cfg.Speed
		opts.Clock = newFastClock(speed)
	}
	eng, err := engine.New(opts)
	if err != nil {
		return nil, err
	}
	if cfg.Observe {
		control.Handle("GET /metrics", eng.AdminHandler())
		go func() {
			for range time.Tick(time.Duration(float64(time.Minute) / speed)) {
				_ = json.NewEncoder(io.Discard).Encode(eng.Report())
			}
		}()
	}
	return eng.Handler(), nil
}

// serveStats answers the child's Stats, after a collection with ?gc=1.
func serveStats(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, ReadStats(r.URL.Query().Get("gc") == "1"))
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// fastClock is a proxy.Clock that runs speed times faster than real time
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
