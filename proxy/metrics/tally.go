package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/frayproxy/fray/proxy/observe"
)

// tally keeps the series that every event changes, fray_events_total and
// fray_added_latency_seconds, as plain numbers under one mutex, and is the
// prometheus.Collector that exposes them. Taking the mutex once per event
// costs two atomic operations where client_golang's two counters and
// histogram cost one for each counter, four for the histogram and a
// compare-and-swap loop for its sum; and as the latency sum is added in
// the order the events are counted, it reads to the last bit what their
// histogram would. A scrape reads the counts of a whole number of events.
//
// The zero tally is not usable: call newTally. Its methods are safe for
// concurrent use.
type tally struct {
	mu           sync.Mutex
	fromUpstream uint64
	toClient     uint64
	added        histogramCounts

	eventsDesc *prometheus.Desc
	addedDesc  *prometheus.Desc
	created    time.Time // the created timestamp of the tally's series
}

// newTally returns a tally whose latency histogram has the upper bounds
// latencyBounds.
func newTally(latencyBounds []float64) *tally {
	return &tally{
		added: newHistogramCounts(latencyBounds),
		eventsDesc: prometheus.NewDesc("fray_events_total",
			"SSE events read from the upstream (from_upstream) and written to the client (to_client, duplicates counted, dropped and lost events not).",
			[]string{"direction"}, nil),
		addedDesc: prometheus.NewDesc("fray_added_latency_seconds",
			"From an event's arrival from the upstream to its delivery to the client.", nil, nil),
		created: time.Now(),
	}
}

// event counts an event read from the upstream at at.
func (t *tally) event(e *observe.Event, at time.Duration) {
	t.mu.Lock()
	t.fromUpstream++
	if e.Fate == observe.Delivered {
		t.toClient += uint64(max(e.Copies, 0))
		t.added.observe(max(e.DeliveredAt-at, 0).Seconds())
	}
	t.mu.Unlock()
}

// Describe sends the descriptors of the tally's two families.
func (t *tally) Describe(ch chan<- *prometheus.Desc) {
	ch <- t.eventsDesc
	ch <- t.addedDesc
}

// Collect sends the tally's series as they stand.
func (t *tally) Collect(ch chan<- prometheus.Metric) {
	t.mu.Lock()
	fromUpstream, toClient, added := t.fromUpstream, t.toClient, t.added.snapshot()
	t.mu.Unlock()
	ch <- t.counter(t.eventsDesc, fromUpstream, "from_upstream")
	ch <- t.counter(t.eventsDesc, toClient, "to_client")
	ch <- added.metric(t.addedDesc, t.created)
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
