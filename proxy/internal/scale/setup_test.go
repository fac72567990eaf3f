package scale_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/internal/scale"
)

func TestMain(m *testing.M) {
	if scale.IsChild() {
		os.Exit(scale.RunChild())
	}
	os.Exit(m.Run())
}

// The setups compared, in order: ReverseProxy and fray last, so that the
// two are open together once both have run alone, and take turns.
const (
	direct       = "direct"
	reverseProxy = scale.ModeReverseProxy
	fray         = scale.ModeFray
	floor        = scale.ModeFloor
)

var setups = []string{direct, floor, reverseProxy, fray}

// withFloor is FRAY_SCALE_FLOOR=1: BenchmarkScale measures the floor
// setup too.
var withFloor = os.Getenv("FRAY_SCALE_FLOOR") == "1"

// setup is one of the ways to reach the upstream, with n streams open
// through it:
//
//	direct:        Streams -> upstream
//	reverseproxy:  Streams -> httputil.ReverseProxy -> upstream
//	fray:          Streams -> fray (as fray proxy --admin runs it) -> upstream
//	floor:         Streams -> the least proxy net/http allows -> upstream
//
// Each setup gets its own upstream process and loopback addresses
// (127.0.0.2 and up), so that no setup inherits another's sockets.
type setup struct {
	name     string
	up       *scale.Child
	proxy    *scale.Child // nil for direct
	streams  *scale.Streams
	n        int
	fired    int64  // events per stream fired so far
	fresh    memory // the first n streams into a fresh process
	memory   memory // n streams again, after the first n came and went
	upMemory memory // the upstream's, for the streams open now
	// idle is the measured process's goroutines with no stream open, as
	// the first measurement found them.
	idle int
}

// memory is a process's Stats before the streams opened and once all of
// them are open, both after a collection.
type memory struct{ before, after scale.Stats }

// perStream is what the process gained per stream, in bytes.
func (m memory) perStream(n int, field func(scale.Stats) uint64) float64 {
	return (float64(field(m.after)) - float64(field(m.before))) / float64(n)
}

func rss(s scale.Stats) uint64        { return s.RSS }
func heap(s scale.Stats) uint64       { return s.HeapInUse }
func stacks(s scale.Stats) uint64     { return s.Stacks }
func goroutines(s scale.Stats) uint64 { return uint64(s.Goroutines) }

// measured is the process whose memory is the setup's: the proxy, or for
// direct the upstream.
func (s *setup) measured() *scale.Child {
	if s.proxy != nil {
		return s.proxy
	}
	return s.up
}

// startSetup starts the processes of setup name (index i among setups),
// warms the path up, then twice reads the memory, opens n streams, waits
// until the upstream holds all of them and reads the memory again; the
// first n streams are closed before the second n open, which stay.
func startSetup(ctx context.Context, name string, i, n int) (_ *setup, err error) {
	s := &setup{name: name, n: n}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	s.up, err = scale.StartChild(ctx, scale.ChildConfig{Mode: scale.ModeUpstream, Listen: fmt.Sprintf("127.0.0.%d:0", 2+2*i)})
	if err != nil {
		return nil, err
	}
	target := "http://" + s.up.Addr + "/mcp"
	if name != direct {
		cfg := scale.ChildConfig{Mode: name, Listen: fmt.Sprintf("127.0.0.%d:0", 3+2*i), Upstream: "http://" + s.up.Addr}
		if name == fray {
			// FRAY_SCALE_TRACE=FILE: fray also writes its trace, as
			// `fray proxy --trace FILE` does.
			cfg.Trace = os.Getenv("FRAY_SCALE_TRACE")
		}
		s.proxy, err = scale.StartChild(ctx, cfg)
		if err != nil {
			return nil, err
		}
		target = "http://" + s.proxy.Addr + "/mcp"
	}
	// One round through a few streams first, so that what the first use
	// of each code path sets up once is in the baseline, not the streams.
	warm, err := scale.Open(ctx, target, 16, 16)
	if err != nil {
		return nil, err
	}
	warm.Expect(16 * 4)
	err = s.up.Fire(ctx, 4)
	if err == nil {
		err = warm.Wait(ctx)
	}
	warm.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: warming up: %w", name, err)
	}
	// Streams opened from now on owe none of the warm-up's events.
	//
	// First streams into a fresh process, then the same number again
	// once those have come and gone: a proxy that has run for a while
	// reuses memory it freed, which it must clear before reuse, so that
	// buffers it never fills become resident where fresh pages from the
	// system did not.
	if s.fresh, err = s.openMeasured(ctx, target, n); err != nil {
		return nil, err
	}
	if err := s.round(ctx, 1); err != nil {
		return nil, err
	}
	s.streams.Close()
	s.streams, s.fired = nil, 0
	if s.memory, err = s.openMeasured(ctx, target, n); err != nil {
		return nil, err
	}
	if dir := os.Getenv("FRAY_SCALE_PPROF"); dir != "" {
		if err := s.saveProfiles(ctx, dir); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// saveProfiles writes the measured process's heap and goroutine profiles,
// taken with every stream open, to dir/NAME.heap and dir/NAME.goroutine.
func (s *setup) saveProfiles(ctx context.Context, dir string) error {
	for _, prof := range []string{"heap", "goroutine"} {
		if err := saveProfile(ctx, s.measured(), prof, filepath.Join(dir, s.name+"."+prof)); err != nil {
			return err
		}
	}
	return nil
}

// saveProfile writes c's pprof profile prof to file.
func saveProfile(ctx context.Context, c *scale.Child, prof, file string) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	err = c.Profile(ctx, prof, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// openMeasured opens n streams to target once the upstream holds none,
// reading the memory of the measured process and of the upstream before
// and after. The upstream's is kept in s.upMemory.
func (s *setup) openMeasured(ctx context.Context, target string, n int) (m memory, err error) {
	if err := s.upstreamHolds(ctx, 0); err != nil {
		return m, err
	}
	if err := s.measuredIdle(ctx); err != nil {
		return m, err
	}
	if m.before, err = s.measured().Stats(ctx, true); err != nil {
		return m, err
	}
	if s.idle == 0 {
		s.idle = m.before.Goroutines
	}
	if s.upMemory.before, err = s.up.Stats(ctx, true); err != nil {
		return m, err
	}
	if s.streams, err = scale.Open(ctx, target, n, 128); err != nil {
		return m, fmt.Errorf("%s: %w", s.name, err)
	}
	if err := s.upstreamHolds(ctx, n); err != nil {
		return m, err
	}
	if m.after, err = s.measured().Stats(ctx, true); err != nil {
		return m, err
	}
	if s.upMemory.after, err = s.up.Stats(ctx, true); err != nil {
		return m, err
	}
	return m, nil
}

// measuredIdle waits until the measured process is back to the goroutines
// it had with no stream open (once the first measurement has found them):
// a proxy ends its streams a moment after the upstream sees them closed,
// and memory read before then still holds streams that came and went,
// which made a proxy that was slow to end them look small per stream.
func (s *setup) measuredIdle(ctx context.Context) error {
	if s.idle == 0 {
		return nil
	}
	deadline := time.Now().Add(time.Minute)
	for {
		st, err := s.measured().Stats(ctx, false)
		if err != nil {
			return err
		}
		if st.Goroutines <= s.idle {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: %d goroutines a minute after its streams ended, want %d at most", s.name, st.Goroutines, s.idle)
		}
		time.Sleep(20 * time.Millisecond) // polling a count in another process
	}
}

// upstreamHolds waits until the upstream holds exactly n streams: streams
// end there a moment after their clients close them, and open a moment
// before their first event is counted.
func (s *setup) upstreamHolds(ctx context.Context, n int) error {
	deadline := time.Now().Add(time.Minute)
	for {
		got, err := s.up.Streams(ctx)
		if err != nil {
			return err
		}
		if got == n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: the upstream holds %d streams, want %d", s.name, got, n)
		}
		time.Sleep(20 * time.Millisecond) // polling a count in another process
	}
}

// round fires k events on every stream and waits until all have arrived.
func (s *setup) round(ctx context.Context, k int) error {
	s.fired += int64(k)
	s.streams.Expect(s.fired * int64(s.n))
	if err := s.up.Fire(ctx, k); err != nil {
		return err
	}
	if err := s.streams.Wait(ctx); err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	return nil
}

func (s *setup) close() {
	if s.streams != nil {
		s.streams.Close()
	}
	if s.proxy != nil {
		_ = s.proxy.Close()
	}
	if s.up != nil {
		_ = s.up.Close()
	}
}
