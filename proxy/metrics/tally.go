package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/observe"
)

// tally keeps the series that every event changes, fray_events_total,
// fray_added_latency_seconds and, for the fault kinds registered when it
// was made, fray_faults_total, as plain numbers under one mutex, and is
// the prometheus.Collector that exposes them: an event (or a run of
// events) takes one lock rather than an atomic operation per series, a
// scrape reads whole events with their firings, and the latency sum,
// added in the order events are counted, is what a histogram would read.
// Firings of kinds registered later go to a client_golang counter vector
// that the tally collects with its own series.
//
// The zero tally is not usable: call newTally. Its methods are safe for
// concurrent use.
type tally struct {
	mu           sync.Mutex
	fromUpstream uint64
	toClient     uint64
	added        histogramCounts
	faults       []uint64 // firings by kind, in the order of kinds

	kinds      []string       // read-only
	kindSlot   map[string]int // kind -> index in faults; read-only
	lateKinds  *prometheus.CounterVec
	eventsDesc *prometheus.Desc
	addedDesc  *prometheus.Desc
	faultsDesc *prometheus.Desc
	created    time.Time // the created timestamp of the tally's own series
}

const faultsHelp = "Fault firings, by fault kind."

// newTally returns a tally whose latency histogram has the upper bounds
// latencyBounds and whose fault counts are those of kinds.
func newTally(latencyBounds []float64, kinds []string) *tally {
	t := &tally{
		added:    newHistogramCounts(latencyBounds),
		faults:   make([]uint64, len(kinds)),
		kinds:    kinds,
		kindSlot: make(map[string]int, len(kinds)),
		lateKinds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fray_faults_total", Help: faultsHelp,
		}, []string{"kind"}),
		eventsDesc: prometheus.NewDesc("fray_events_total",
			"SSE events read from the upstream (from_upstream) and written to the client (to_client, duplicates counted, dropped and lost events not).",
			[]string{"direction"}, nil),
		addedDesc:  prometheus.NewDesc("fray_added_latency_seconds", addedHelp, nil, nil),
		faultsDesc: prometheus.NewDesc("fray_faults_total", faultsHelp, []string{"kind"}, nil),
		created:    time.Now(),
	}
	for i, k := range kinds {
		t.kindSlot[k] = i
		// Fails here, as the vector's child would have, on a kind that
		// is no label value, rather than at each scrape.
		prometheus.MustNewConstMetric(t.faultsDesc, prometheus.CounterValue, 0, k)
	}
	return t
}

// event counts an event read from the upstream at at, and the faults
// that fired on it.
func (t *tally) event(e *observe.Event, at time.Duration, fired []faults.Firing) {
	t.mu.Lock()
	late := t.eventLocked(e, at, fired)
	t.mu.Unlock()
	if late {
		t.countLate(fired)
	}
}

// events counts the events of run, every one an event observation, as
// event counts each, under one lock. It reports whether a firing was of
// a kind registered after the tally was made, for countLate.
func (t *tally) events(run []observe.Observation) (late bool) {
	t.mu.Lock()
	for i := range run {
		o := &run[i]
		if t.eventLocked(o.Event, o.At, o.Fired) {
			late = true
		}
	}
	t.mu.Unlock()
	return late
}

// addedHelp says what fray_added_latency_seconds measures, as docs/cli.md
// does.
const addedHelp = "How long fray held an event it delivered before writing it to the client: what delay, stall and throttle faults added, 0 for an event passed on at once; fray's own cost per event is not counted."

// eventLocked counts an event and its firings; it reports whether there
// were firings of kinds registered late. t.mu is held.
func (t *tally) eventLocked(e *observe.Event, at time.Duration, fired []faults.Firing) (late bool) {
	t.fromUpstream++
	if e.Fate == observe.Delivered {
		t.toClient += uint64(max(e.Copies, 0))
		t.added.observe(max(e.DeliveredAt-at, 0).Seconds())
	}
	return t.countFirings(fired)
}

// fired counts the faults that fired on something other than an event.
func (t *tally) fired(fired []faults.Firing) {
	t.mu.Lock()
	late := t.countFirings(fired)
	t.mu.Unlock()
	if late {
		t.countLate(fired)
	}
}

// countFirings counts the firings of the tally's kinds; it reports
// whether there were others, for countLate. t.mu must be held.
func (t *tally) countFirings(fired []faults.Firing) (late bool) {
	for i := range fired {
		if slot, ok := t.kindSlot[fired[i].Kind]; ok {
			t.faults[slot]++
		} else {
			late = true
		}
	}
	return late
}

// countLate counts the firings of kinds registered after the tally was
// made. It runs without t.mu: the vector may panic on a kind that is no
// label value, as it did before the tally existed.
func (t *tally) countLate(fired []faults.Firing) {
	for i := range fired {
		if _, ok := t.kindSlot[fired[i].Kind]; !ok {
			t.lateKinds.WithLabelValues(fired[i].Kind).Inc()
		}
	}
}

// Describe sends the descriptors of the tally's three families.
func (t *tally) Describe(ch chan<- *prometheus.Desc) {
	ch <- t.eventsDesc
	ch <- t.addedDesc
	ch <- t.faultsDesc
}

// Collect sends the tally's series as they stand.
func (t *tally) Collect(ch chan<- prometheus.Metric) {
	t.mu.Lock()
	fromUpstream, toClient, added := t.fromUpstream, t.toClient, t.added.snapshot()
	fired := append([]uint64(nil), t.faults...)
	t.mu.Unlock()
	ch <- t.counter(t.eventsDesc, fromUpstream, "from_upstream")
	ch <- t.counter(t.eventsDesc, toClient, "to_client")
	ch <- added.metric(t.addedDesc, t.created)
	for i, n := range fired {
		ch <- t.counter(t.faultsDesc, n, t.kinds[i])
	}
	t.lateKinds.Collect(ch)
}

func (t *tally) counter(desc *prometheus.Desc, n uint64, label string) prometheus.Metric {
	return prometheus.MustNewConstMetricWithCreatedTimestamp(desc, prometheus.CounterValue, float64(n), t.created, label)
}

// histogramCounts is a classic Prometheus histogram as plain numbers, for
// an owner that serializes its use. The zero value has only the +Inf
// bucket; newHistogramCounts gives it upper bounds.
type histogramCounts struct {
	bounds []float64 // ascending upper bounds; read-only, may be shared
	counts []uint64  // per bound, then the +Inf bucket; not cumulative
	count  uint64
	sum    float64
}

func newHistogramCounts(bounds []float64) histogramCounts {
	return histogramCounts{bounds: bounds, counts: make([]uint64, len(bounds)+1)}
}

// observe counts v in the first bucket whose upper bound it does not
// exceed, as client_golang does.
func (h *histogramCounts) observe(v float64) {
	i := 0
	for i < len(h.bounds) && v > h.bounds[i] {
		i++
	}
	h.counts[i]++
	h.count++
	h.sum += v
}

// snapshot returns a copy that later observations do not change.
func (h *histogramCounts) snapshot() histogramCounts {
	c := *h
	c.counts = append([]uint64(nil), h.counts...)
	return c
}

// metric returns the histogram as a constant metric of desc.
func (h *histogramCounts) metric(desc *prometheus.Desc, created time.Time) prometheus.Metric {
	cumulative := make(map[float64]uint64, len(h.bounds))
	var n uint64
	for i, b := range h.bounds {
		n += h.counts[i]
		cumulative[b] = n
	}
	return prometheus.MustNewConstHistogramWithCreatedTimestamp(desc, h.count, h.sum, cumulative, created)
}
