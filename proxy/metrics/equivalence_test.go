package metrics_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/metrics"
	"github.com/frayproxy/fray/proxy/observe"
)

// perEvent are the families that every event or fault firing changes.
var perEvent = []string{"fray_events_total", "fray_added_latency_seconds", "fray_faults_total"}

// reference counts events and fault firings with client_golang's own
// counters and histogram, as Metrics did before it kept these counts
// itself: whatever Metrics keeps, a scrape must read the same.
type reference struct {
	reg          *prometheus.Registry
	fromUpstream prometheus.Counter
	toClient     prometheus.Counter
	faults       *prometheus.CounterVec
	added        prometheus.Histogram
}

func newReference() *reference {
	events := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "fray_events_total", Help: "SSE events read from the upstream (from_upstream) and written to the client (to_client, duplicates counted, dropped and lost events not).",
	}, []string{"direction"})
	r := &reference{
		reg:          prometheus.NewRegistry(),
		fromUpstream: events.WithLabelValues("from_upstream"),
		toClient:     events.WithLabelValues("to_client"),
		faults: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fray_faults_total", Help: "Fault firings, by fault kind.",
		}, []string{"kind"}),
		added: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "fray_added_latency_seconds", Help: "How long fray held an event it delivered before writing it to the client: what delay, stall and throttle faults added, 0 for an event passed on at once; fray's own cost per event is not counted.",
			Buckets: metrics.LatencyBuckets,
		}),
	}
	for _, k := range faults.Kinds() {
		r.faults.WithLabelValues(k.Name)
	}
	r.reg.MustRegister(events, r.faults, r.added)
	return r
}

func (r *reference) Observe(o *observe.Observation) {
	if e := o.Event; o.Kind == observe.KindEvent {
		r.fromUpstream.Inc()
		if e.Fate == observe.Delivered {
			r.toClient.Add(float64(e.Copies))
			r.added.Observe(max(e.DeliveredAt-o.At, 0).Seconds())
		}
	}
	for _, f := range o.Fired {
		r.faults.WithLabelValues(f.Kind).Inc()
	}
}

// observations returns n observations as the proxy reports them, in the
// mix of kinds, fates, copies, latencies and firings that the per-event
// counts must tell apart: latencies on and next to each bucket bound,
// negative, past the last bound, and fault kinds that were registered
// when New ran and one that was not, at changing fault indexes.
func observations(seed uint64, n int) []*observe.Observation {
	rng := rand.New(rand.NewPCG(seed, 1))
	var latencies []time.Duration
	for _, b := range metrics.LatencyBuckets {
		d := time.Duration(b * 1e9)
		latencies = append(latencies, d-1, d, d+1)
	}
	latencies = append(latencies, 0, -time.Millisecond, time.Minute)
	kinds := []string{"custom-late-kind"}
	for _, k := range faults.Kinds() {
		kinds = append(kinds, k.Name)
	}
	fates := []observe.Fate{observe.Delivered, observe.Delivered, observe.Delivered, observe.Dropped}
	out := make([]*observe.Observation, n)
	at := time.Second
	for i := range out {
		at += time.Duration(rng.IntN(1000)) * time.Microsecond
		o := &observe.Observation{Kind: observe.KindEvent, At: at, Exchange: uint64(1 + rng.IntN(3)), Stream: mcp.StreamPost}
		lat := latencies[rng.IntN(len(latencies))]
		if rng.IntN(2) == 0 {
			lat = time.Duration(rng.Int64N(int64(3 * time.Second)))
		}
		o.Event = &observe.Event{Fate: fates[rng.IntN(len(fates))], DeliveredAt: at + lat, Copies: rng.IntN(4)}
		if rng.IntN(10) == 0 {
			o.Kind, o.Event = observe.KindRequest, nil
			o.Request = &observe.Request{Method: http.MethodPost}
		}
		for range rng.IntN(3) {
			// Indexes past the first few, and kinds that change at one
			// index, as when the profile changes.
			o.Fired = append(o.Fired, faults.Firing{Index: rng.IntN(20), Kind: kinds[rng.IntN(len(kinds))]})
		}
		out[i] = o
	}
	return out
}

// TestPerEventSeriesMatchReference: for the same observations, a scrape
// after each one reads, in every per-event family, what client_golang's
// own counters and histogram would have read: names, help, types, labels,
// bucket bounds and values to the last bit of the latency sum.
func TestPerEventSeriesMatchReference(t *testing.T) {
	m := metrics.New(metrics.Options{NoRuntime: true})
	ref := newReference()
	for i, o := range observations(1, 3000) {
		m.Observe(o)
		ref.Observe(o)
		if i%7 != 0 {
			continue
		}
		sameAsReference(t, m, ref, fmt.Sprintf("after observation %d", i))
	}
}

// sameAsReference fails the test unless m's per-event families scrape as
// ref's do; when says after what.
func sameAsReference(t *testing.T, m *metrics.Metrics, ref *reference, when string) {
	t.Helper()
	got, want := perEventFamilies(t, m.Registry()), perEventFamilies(t, ref.reg)
	if !equalFamilies(got, want) {
		t.Fatalf("%s, Metrics scrapes\n%s\nclient_golang's own would scrape\n%s", when, text(t, got), text(t, want))
	}
}

// perEventFamilies gathers the per-event families of reg, with their
// created timestamps checked and then cleared: they tell when each series
// was made, not what it counted.
func perEventFamilies(t *testing.T, reg prometheus.Gatherer) []*dto.MetricFamily {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []*dto.MetricFamily
	for _, f := range fams {
		for _, name := range perEvent {
			if f.GetName() == name {
				clearCreated(t, f)
				out = append(out, f)
			}
		}
	}
	if len(out) != len(perEvent) {
		t.Fatalf("gathered %d of the %d per-event families", len(out), len(perEvent))
	}
	return out
}

func clearCreated(t *testing.T, f *dto.MetricFamily) {
	t.Helper()
	for _, m := range f.GetMetric() {
		switch {
		case m.Counter != nil && m.Counter.CreatedTimestamp != nil:
			m.Counter.CreatedTimestamp = nil
		case m.Histogram != nil && m.Histogram.CreatedTimestamp != nil:
			m.Histogram.CreatedTimestamp = nil
		default:
			t.Errorf("%s%v has no created timestamp", f.GetName(), m.GetLabel())
		}
	}
}

// addedLatency gathers reg and returns its added-latency histogram; unlike
// perEventFamilies it may run outside the test's goroutine.
func addedLatency(reg prometheus.Gatherer) (*dto.Histogram, error) {
	fams, err := reg.Gather()
	if err != nil {
		return nil, err
	}
	for _, f := range fams {
		if f.GetName() == "fray_added_latency_seconds" {
			return f.GetMetric()[0].GetHistogram(), nil
		}
	}
	return nil, fmt.Errorf("no fray_added_latency_seconds in %d families", len(fams))
}

func equalFamilies(a, b []*dto.MetricFamily) bool {
	return slices.EqualFunc(a, b, func(x, y *dto.MetricFamily) bool { return proto.Equal(x, y) })
}

// text is fams in the Prometheus text format, to show a difference.
func text(t *testing.T, fams []*dto.MetricFamily) string {
	t.Helper()
	var b strings.Builder
	for _, f := range fams {
		if _, err := expfmt.MetricFamilyToText(&b, f); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// TestPerEventSeriesConcurrent observes from several goroutines while
// others scrape: every scrape's latency histogram counts whole events
// (its buckets add up to its count), the counts only grow, and at the end
// they are those of the observations, in whatever order they came.
func TestPerEventSeriesConcurrent(t *testing.T) {
	const workers, each = 4, 2000
	m := metrics.New(metrics.Options{NoRuntime: true})
	ref := newReference()
	start, done := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		obs := observations(uint64(10+w), each)
		for _, o := range obs {
			ref.Observe(o)
		}
		wg.Go(func() {
			<-start
			for _, o := range obs {
				m.Observe(o)
			}
		})
	}
	scrapes := make(chan int)
	go func() {
		n, last := 0, uint64(0)
		for {
			if n == 1 {
				close(start)
			}
			select {
			case <-done:
				scrapes <- n
				return
			default:
			}
			h, err := addedLatency(m.Registry())
			if err != nil {
				t.Error(err)
				continue
			}
			if b := h.GetBucket(); b[len(b)-1].GetCumulativeCount() > h.GetSampleCount() {
				t.Errorf("a scrape's buckets hold %d events, its count %d", b[len(b)-1].GetCumulativeCount(), h.GetSampleCount())
			}
			if h.GetSampleCount() < last {
				t.Errorf("the latency count went back from %d to %d", last, h.GetSampleCount())
			}
			last = h.GetSampleCount()
			n++
		}
	}()
	wg.Wait()
	close(done)
	t.Logf("%d scrapes during the observations", <-scrapes)

	got, want := perEventFamilies(t, m.Registry()), perEventFamilies(t, ref.reg)
	// Summed in another order, the latency sum may differ in its last bits.
	gh, wh := got[0].GetMetric()[0].GetHistogram(), want[0].GetMetric()[0].GetHistogram()
	if d := gh.GetSampleSum() - wh.GetSampleSum(); d > 1e-9 || d < -1e-9 {
		t.Errorf("latency sum %v, want %v", gh.GetSampleSum(), wh.GetSampleSum())
	}
	gh.SampleSum, wh.SampleSum = nil, nil
	if !equalFamilies(got, want) {
		t.Errorf("after concurrent observations, Metrics scrapes\n%s\nwant\n%s", text(t, got), text(t, want))
	}
}

// TestRunsCountAsObservations: observations passed in runs (ObserveRun, as
// the engine's queue passes its events on), requests among the events,
// scrape after every run as client_golang's own counters and histogram
// read when given them one at a time.
func TestRunsCountAsObservations(t *testing.T) {
	m := metrics.New(metrics.Options{NoRuntime: true})
	ref := newReference()
	obs := observations(2, 3000)
	for i, runs := 0, 0; i < len(obs); runs++ {
		run := make([]observe.Observation, min(1+runs%40, len(obs)-i))
		for j := range run {
			run[j] = *obs[i+j]
			ref.Observe(obs[i+j])
		}
		m.ObserveRun(run)
		i += len(run)
		sameAsReference(t, m, ref, fmt.Sprintf("after run %d (observation %d)", runs, i))
	}
}
