package scale_test

import (
	"context"
	"os"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/internal/benchsse"
	"github.com/frayproxy/fray/proxy/internal/scale"
)

// BenchmarkScale holds 10,000 concurrent idle SSE streams direct to an
// upstream, with FRAY_SCALE_FLOOR=1 through the least proxy net/http
// allows (newFloor), through httputil.ReverseProxy and through fray as
// `fray proxy --admin` runs it (the verifier and the metrics attached), one
// setup after the other, and reports for each
//
//	rss-KiB/stream    resident memory (VmRSS) the proxy process gained per
//	                  idle stream (for direct: the upstream process), read
//	                  after a collection in both readings
//	heap-KiB/stream   of which Go heap in use
//	stack-KiB/stream  of which goroutine stacks
//	goroutines/stream goroutines per stream
//	events/s          events delivered per second with every stream
//	                  receiving, each round firing scaleEvents events on
//	                  every stream at once
//	cpu-µs/event      the CPU time (user and system) the measured process
//	                  spent per event during those rounds
//	writes/event      its write system calls per event (reads/event: its
//	                  reads), from /proc/PID/io
//	alloc-B/event     the bytes it allocated on the heap per event
//	gcs/round         the garbage collections it completed per round
//
// then, in fray-vs-reverseproxy, with ReverseProxy's streams and fray's
// open together, pairsPerOp·b.N rounds of each taking turns (each pair in
// the other order from the last), so that a machine that slows or speeds
// up meanwhile does so for both: the ratios mem-ratio (fray's rss per
// stream over ReverseProxy's), events-ratio (fray's events/s over
// ReverseProxy's in those rounds) and cpu-ratio (its CPU per event over
// ReverseProxy's), each one's events/s there, and on Linux steal-%, the
// share of the machine's CPU time its host gave to other work while the
// pairs ran (benchsse.HostSteal); and fails when fray
// holds more memory per stream than ReverseProxy or delivers less than
// 0.9× its events/s. The client holds both setups' streams then, one
// socket each: within the same file limit as a proxy, which holds two per
// stream.
//
// Each proxy and the upstream run in child processes of their own, so
// that each reading is one process's, from the kernel. A proxy holds two
// sockets per stream: the benchmark raises RLIMIT_NOFILE, and where the
// hard limit is too low for 10,000 streams it runs as many as the limit
// allows and says so (FRAY_SCALE_STREAMS sets another count).
// FRAY_SCALE_PPROF=DIR saves each measured process's heap and goroutine
// profiles with every stream open, FRAY_SCALE_CPUPROFILE=DIR its CPU
// profile, FRAY_SCALE_TRACE=FILE has fray write its trace there as --trace
// does.
//
//	go test -run XXX -bench BenchmarkScale -benchtime 5x ./proxy/internal/scale/
func BenchmarkScale(b *testing.B) {
	n := streamCount(b)
	ctx := context.Background()
	results := map[string]*result{}
	held := map[string]*setup{}
	defer func() {
		for _, s := range held {
			s.close()
		}
	}()
	for i, name := range setups {
		if name == floor && !withFloor {
			continue
		}
		s, err := startSetup(ctx, name, i, n)
		if err != nil {
			b.Fatal(err)
		}
		held[name] = s
		res := &result{
			rss:        s.memory.perStream(n, rss),
			freshRSS:   s.fresh.perStream(n, rss),
			heap:       s.memory.perStream(n, heap),
			stacks:     s.memory.perStream(n, stacks),
			goroutines: s.memory.perStream(n, goroutines),
			upRSS:      s.upMemory.perStream(n, rss),
		}
		results[name] = res
		b.Logf("%s: %d streams; measured process RSS %d -> %d KiB; upstream %.1f KiB/stream",
			name, n, s.memory.before.RSS>>10, s.memory.after.RSS>>10, res.upRSS/1024)
		b.Run(name, func(b *testing.B) {
			var r rounds
			for range b.N {
				if err := r.add(ctx, s); err != nil {
					b.Fatal(err)
				}
			}
			res.eventsPerSec, res.cpuPerEvent = r.eventsPerSec(), r.cpuPerEvent()
			b.ReportMetric(res.cpuPerEvent, "cpu-µs/event")
			b.ReportMetric(r.perEvent(func(s scale.Stats) uint64 { return s.Writes }), "writes/event")
			b.ReportMetric(r.perEvent(func(s scale.Stats) uint64 { return s.Reads }), "reads/event")
			b.ReportMetric(r.perEvent(func(s scale.Stats) uint64 { return s.Allocs }), "alloc-B/event")
			b.ReportMetric(float64(r.gcs)/float64(b.N), "gcs/round")
			b.ReportMetric(res.rss/1024, "rss-KiB/stream")
			b.ReportMetric(res.freshRSS/1024, "fresh-rss-KiB/stream")
			b.ReportMetric(res.heap/1024, "heap-KiB/stream")
			b.ReportMetric(res.stacks/1024, "stack-KiB/stream")
			b.ReportMetric(res.goroutines, "goroutines/stream")
			b.ReportMetric(res.eventsPerSec, "events/s")
		})
		// ReverseProxy and fray stay open, to take turns below.
		if name != reverseProxy && name != fray {
			s.close()
			delete(held, name)
		}
	}
	b.Run("fray-vs-reverseproxy", func(b *testing.B) {
		f, rp := results[fray], results[reverseProxy]
		// The two, both open, take turns round by round (each pair in the
		// other order from the last), so that whatever else the machine
		// does falls on both alike: their own rounds above ran tens of
		// seconds apart.
		// rf and rr sum all the rounds, pf and pr hold the current pair's:
		// the verdict is the median of the pairs' ratios, so that one round
		// the machine slowed for, which the sum charges to whichever setup
		// ran then, does not decide it.
		var rf, rr, pf, pr rounds
		pair := []struct {
			r, this *rounds
			s       *setup
		}{{&rr, &pr, held[reverseProxy]}, {&rf, &pf, held[fray]}}
		var ratios []float64
		steal0, sok0 := benchsse.HostSteal()
		start := time.Now()
		for range pairsPerOp * b.N {
			for _, p := range pair {
				*p.this = rounds{}
				if err := p.this.add(ctx, p.s); err != nil {
					b.Fatal(err)
				}
				p.r.merge(p.this)
			}
			slices.Reverse(pair)
			ratios = append(ratios, pf.eventsPerSec()/pr.eventsPerSec())
		}
		took := time.Since(start)
		steal1, sok1 := benchsse.HostSteal()
		mem, pooled, cpu := f.rss/rp.rss, rf.eventsPerSec()/rr.eventsPerSec(), rf.cpuPerEvent()/rr.cpuPerEvent()
		ev := median(ratios)
		b.ReportMetric(0, "ns/op")
		b.ReportMetric(mem, "mem-ratio")
		b.ReportMetric(ev, "events-ratio")
		b.ReportMetric(pooled, "pooled-events-ratio")
		b.ReportMetric(cpu, "cpu-ratio")
		b.ReportMetric(rr.eventsPerSec(), "reverseproxy:events/s")
		b.ReportMetric(rf.eventsPerSec(), "fray:events/s")
		if sok0 && sok1 {
			// How much of the machine its host gave to other work
			// meanwhile: a contended machine's ratios spread wider.
			steal := benchsse.StealPercent(steal1-steal0, took)
			b.ReportMetric(steal, "steal-%")
			b.Logf("the host took %.1f%% of this machine's CPU time while the pairs ran (steal)", steal)
		}
		b.Logf("memory per idle stream: direct %.1f KiB, reverseproxy %.1f KiB, fray %.1f KiB: fray/reverseproxy %.2f (want <= 1): %s",
			results[direct].rss/1024, rp.rss/1024, f.rss/1024, mem, verdict(mem <= 1))
		b.Logf("events/s at %d streams, rounds taken in turn: fray/reverseproxy %.2f, the median of %d pairs' ratios (want >= 0.9): %s; pairs from %.2f to %.2f",
			n, ev, len(ratios), verdict(ev >= 0.9), slices.Min(ratios), slices.Max(ratios))
		b.Logf("events/s over all those rounds: reverseproxy %.0f, fray %.0f: fray/reverseproxy %.2f (for information)",
			rr.eventsPerSec(), rf.eventsPerSec(), pooled)
		b.Logf("events/s in each setup's own rounds: direct %.0f, reverseproxy %.0f, fray %.0f (for information)",
			results[direct].eventsPerSec, rp.eventsPerSec, f.eventsPerSec)
		// CPU time per event, of the proxy process alone: what the events/s
		// of a machine shared with other work cannot show apart.
		b.Logf("CPU per event, rounds taken in turn: reverseproxy %.2f µs, fray %.2f µs: fray/reverseproxy %.2f (for information)",
			rr.cpuPerEvent(), rf.cpuPerEvent(), cpu)
		// The target, reported and not enforced: with net/http's server
		// and transport, the floor setup holds about 41 KiB itself; fray
		// is under it because its GET streams do without the transport.
		b.Logf("fray per idle stream: %.1f KiB (target <= %d KiB): %s", f.rss/1024, targetStreamKiB, verdict(f.rss/1024 <= targetStreamKiB))
		if fl := results[floor]; fl != nil {
			b.ReportMetric((f.rss-fl.rss)/1024, "above-floor-KiB")
			b.Logf("floor (a copy over net/http's server and transport) %.1f KiB per idle stream, %.0f events/s: fray holds %+.1f KiB against it",
				fl.rss/1024, fl.eventsPerSec, (f.rss-fl.rss)/1024)
		}
		if mem > 1 {
			b.Errorf("fray holds %.1f KiB per idle stream, more than ReverseProxy's %.1f KiB", f.rss/1024, rp.rss/1024)
		}
		if ev < 0.9 {
			b.Errorf("fray delivers %.2fx ReverseProxy's events/s, under 0.9x, at the median of %d pairs of rounds taken in turn", ev, len(ratios))
		}
	})
}

// result is what BenchmarkScale measured of one setup: per idle stream,
// and in the setup's own rounds.
type result struct {
	rss, freshRSS, heap, stacks, goroutines, upRSS float64
	eventsPerSec, cpuPerEvent                      float64
}

// rounds adds up rounds of one setup: their time, their events and what
// the measured process's Stats moved by over each. The zero value holds
// none.
type rounds struct {
	took   time.Duration
	events int64
	gcs    uint64
	sum    scale.Stats // CPU, Reads, Writes, Allocs: the sum of each round's difference
}

// add runs one round of scaleEvents events on every stream of s, timing
// it and reading the measured process's Stats before and after.
func (r *rounds) add(ctx context.Context, s *setup) error {
	before, err := s.measured().Stats(ctx, false)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := s.round(ctx, scaleEvents); err != nil {
		return err
	}
	r.took += time.Since(start)
	after, err := s.measured().Stats(ctx, false)
	if err != nil {
		return err
	}
	r.events += int64(s.n * scaleEvents)
	r.sum.CPU += after.CPU - before.CPU
	r.sum.Reads += after.Reads - before.Reads
	r.sum.Writes += after.Writes - before.Writes
	r.sum.Allocs += after.Allocs - before.Allocs
	r.gcs += after.GCs - before.GCs
	return nil
}

// merge adds o's rounds to r's.
func (r *rounds) merge(o *rounds) {
	r.took += o.took
	r.events += o.events
	r.gcs += o.gcs
	r.sum.CPU += o.sum.CPU
	r.sum.Reads += o.sum.Reads
	r.sum.Writes += o.sum.Writes
	r.sum.Allocs += o.sum.Allocs
}

func (r *rounds) eventsPerSec() float64 { return float64(r.events) / r.took.Seconds() }

// median is the middle of xs (the mean of the two middle ones for an even
// count); xs is sorted in place.
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// cpuPerEvent is the measured process's CPU time per event, in µs.
func (r *rounds) cpuPerEvent() float64 { return r.sum.CPU.Seconds() * 1e6 / float64(r.events) }

// perEvent is a counter of the measured process per event.
func (r *rounds) perEvent(field func(scale.Stats) uint64) float64 {
	return float64(field(r.sum)) / float64(r.events)
}

// scaleEvents is how many events each round fires on every stream.
const scaleEvents = 10

// pairsPerOp is how many pairs of rounds fray-vs-reverseproxy takes for
// each b.N: the testing package runs a benchmark with b.N = 1 first, and
// stops there when that run fails, so that the verdict would otherwise
// rest on one pair. One pair's events/s ratio ranged from 0.84 to 0.97
// over eight pairs of one run on a 2-core machine; rounds are cheap next
// to opening the streams.
const pairsPerOp = 4

// targetStreamKiB is the resident memory per idle stream fray aims at.
const targetStreamKiB = 40

func verdict(ok bool) string {
	if ok {
		return "ok"
	}
	return "FAIL"
}

// streamCount is FRAY_SCALE_STREAMS or 10,000, lowered to what
// RLIMIT_NOFILE allows a proxy: two sockets per stream and a few files of
// its own.
func streamCount(b *testing.B) int {
	if runtime.GOOS != "linux" {
		b.Skip("reads /proc: Linux only")
	}
	want := 10_000
	if s := os.Getenv("FRAY_SCALE_STREAMS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			b.Fatalf("FRAY_SCALE_STREAMS=%q: want a positive number", s)
		}
		want = v
	}
	const spare = 64
	lim, err := scale.RaiseFileLimit(uint64(2*want + spare))
	if err != nil {
		b.Fatal(err)
	}
	n := want
	if room := (int(lim) - spare) / 2; room < n {
		n = room
		b.Logf("RLIMIT_NOFILE is %d here and cannot be raised (no CAP_SYS_RESOURCE): a proxy holds 2 sockets per stream, so %d streams, not %d", lim, n, want)
	}
	return n
}

// TestScaleHarness runs BenchmarkScale's harness with a few streams: in
// each setup every stream gets every event of two rounds, the process
// measured is the one that holds the streams (it gains at least a
// goroutine per stream), and fray is the engine with its metrics attached.
func TestScaleHarness(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc: Linux only")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const n = 20
	for i, name := range setups {
		t.Run(name, func(t *testing.T) {
			s, err := startSetup(ctx, name, i, n)
			if err != nil {
				t.Fatal(err)
			}
			defer s.close()
			for range 2 {
				if err := s.round(ctx, 3); err != nil {
					t.Fatal(err)
				}
			}
			if got, want := s.streams.Events(), int64(n*6); got != want {
				t.Errorf("%d events, want %d", got, want)
			}
			if name == fray {
				// The shipped engine: its metrics counted every stream.
				_, exchanges, err := soakMetrics(ctx, s.proxy)
				if err != nil {
					t.Fatal(err)
				}
				if exchanges < 2*n {
					t.Errorf("fray's metrics count %.0f exchanges, want at least %d: not the engine as fray proxy --admin runs it", exchanges, 2*n)
				}
			}
			m := s.memory
			if m.after.RSS == 0 || m.after.HeapInUse == 0 {
				t.Errorf("no memory read: %+v", m.after)
			}
			if gained := m.after.Goroutines - m.before.Goroutines; gained < n {
				t.Errorf("the measured process gained %d goroutines for %d streams: not the one holding them", gained, n)
			}
		})
	}
}
