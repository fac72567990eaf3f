// Package metrics turns the proxy's observations into Prometheus metrics,
// served in the text format on the admin listener's /metrics:
//
//	fray_exchanges_total{stream}           exchanges by stream type, counted at their request
//	fray_open_streams                      SSE streams being pumped now
//	fray_events_total{direction}           events read from_upstream, events written to_client
//	fray_faults_total{kind}                fault firings by kind
//	fray_findings_total{check}             the verifier's findings by check
//	fray_resumptions_total                 GETs that carry Last-Event-ID
//	fray_reconnect_delay_seconds           a stream's end before its response to the session's next GET
//	fray_added_latency_seconds             how long fray held an event before it wrote it (faults)
//
// plus the Go runtime's and the process's own metrics (go_*, process_*).
//
// Metrics is an observe.Observer: it reads the same observations as the
// verifier and the trace writer. The per-event path costs one lock and no
// allocation; the per-stream state it keeps (which streams are
// open, which sessions owe a reconnection) is bounded.
package metrics

import (
	"fmt"
	"math"
	"net/http"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
)

// Options configures New. The zero value collects everything but findings.
type Options struct {
	// Findings, when not nil, is called at each scrape and returns the
	// verifier's checks so far; each check's Count becomes
	// fray_findings_total{check=ID}. It must be safe for concurrent use.
	Findings func() []report.Check
	// MaxSessions bounds the sessions remembered while they owe a
	// reconnection; past it an arbitrary one is forgotten (its delay is
	// not measured). 0 means 65536.
	MaxSessions int
	// NoRuntime leaves out the Go runtime and process collectors (go_*,
	// process_*), for tests that compare whole scrapes.
	NoRuntime bool
}

// ReconnectBuckets are the upper bounds, in seconds, of
// fray_reconnect_delay_seconds: from a client that reconnects at once to
// one that waits out a long backoff.
var ReconnectBuckets = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// LatencyBuckets are the upper bounds, in seconds, of
// fray_added_latency_seconds: how long fray held an event before writing
// it, from an event passed on at once (0) to the seconds a delay fault
// adds. fray's own cost per event is not counted: reading the clock after
// every write would add to the path it measures.
var LatencyBuckets = []float64{1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// Metrics is an observe.Observer that keeps fray's Prometheus metrics in a
// registry of its own. It is safe for concurrent use. The zero Metrics is
// not usable: call New.
type Metrics struct {
	reg *prometheus.Registry

	// Children resolved once, so that counting allocates nothing.
	exchanges   [mcp.StreamOther + 1]prometheus.Counter
	open        prometheus.Gauge
	resumptions prometheus.Counter
	reconnect   prometheus.Histogram

	// What every event changes: fray_events_total,
	// fray_added_latency_seconds and fray_faults_total.
	tally *tally

	streams  streamTable
	sessions sessionTable
}

// New returns Metrics with every series registered: one per stream type,
// direction and registered fault kind, all at zero.
func New(opts Options) *Metrics {
	reg := prometheus.NewRegistry()
	exchanges := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "fray_exchanges_total", Help: "HTTP exchanges fray carried, by stream type (post, get, resume, legacy, other), counted when the request arrives.",
	}, []string{"stream"})
	m := &Metrics{
		reg: reg,
		open: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "fray_open_streams", Help: "SSE streams fray is pumping now.",
		}),
		resumptions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "fray_resumptions_total", Help: "GET requests that carry Last-Event-ID.",
		}),
		reconnect: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "fray_reconnect_delay_seconds",
			Help:    "From the end of an SSE stream that ended before its response (any end of a standalone GET stream) to the session's next GET.",
			Buckets: ReconnectBuckets,
		}),
		tally:    newTally(latencyBounds(), kindNames()),
		sessions: sessionTable{max: opts.MaxSessions},
	}
	for st := mcp.StreamPost; st <= mcp.StreamOther; st++ {
		m.exchanges[st] = exchanges.WithLabelValues(st.String())
	}
	m.streams.init()
	if m.sessions.max <= 0 {
		m.sessions.max = 1 << 16
	}
	m.sessions.byID = make(map[string]*pending)
	reg.MustRegister(exchanges, m.tally, m.open, m.resumptions, m.reconnect)
	if opts.Findings != nil {
		reg.MustRegister(findingsCollector(opts.Findings))
	}
	if !opts.NoRuntime {
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	return m
}

// Registry returns the registry the metrics live in, for tests and for
// serving them some other way.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus text format (or
// OpenMetrics, when the scraper asks for it).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{EnableOpenMetrics: true})
}

// Observe counts one observation. It allocates nothing for an event.
func (m *Metrics) Observe(o *observe.Observation) {
	switch o.Kind {
	case observe.KindRequest:
		m.request(o)
	case observe.KindResponse:
		if o.Response.EventStream {
			m.streams.open(o.Exchange)
			m.open.Inc()
		}
	case observe.KindEvent:
		m.tally.event(o.Event, o.At, o.Fired)
		m.answered(o)
		return // its firings are counted under the event's lock
	case observe.KindEnd:
		if answered, ok := m.streams.close(o.Exchange); ok {
			m.open.Dec()
			if owesReconnect(o.Stream, o.End.Cause, answered) {
				m.sessions.ended(o.Session, o.At)
			}
		}
	}
	if len(o.Fired) > 0 {
		m.tally.fired(o.Fired)
	}
}

func (m *Metrics) request(o *observe.Observation) {
	if int(o.Stream) < len(m.exchanges) && m.exchanges[o.Stream] != nil {
		m.exchanges[o.Stream].Inc()
	}
	switch o.Request.Method {
	case http.MethodGet:
		if o.Request.HasLastEventID {
			m.resumptions.Inc()
		}
		m.sessions.reconnected(o.Session, o.At, m.reconnect)
	case http.MethodDelete:
		// A session ended on purpose owes no reconnection.
		m.sessions.forget(o.Session)
	}
}

// answered marks the stream of event o answered when o delivered the
// response.
func (m *Metrics) answered(o *observe.Observation) {
	e := o.Event
	if e.Fate != observe.Delivered {
		return
	}
	if k := e.RPCKind; k == mcp.RPCResponse || k == mcp.RPCError {
		m.streams.answer(o.Exchange)
	}
}

// ObserveRun counts a run of observations as Observe counts each, in
// order, the events of each stretch of them under one lock of the tally
// (observe.RunObserver). It allocates nothing for events.
func (m *Metrics) ObserveRun(run []observe.Observation) {
	for len(run) > 0 {
		n := 0
		for n < len(run) && run[n].Kind == observe.KindEvent {
			n++
		}
		if n == 0 {
			m.Observe(&run[0])
			run = run[1:]
			continue
		}
		events := run[:n]
		if m.tally.events(events) {
			for i := range events {
				m.tally.countLate(events[i].Fired)
			}
		}
		for i := range events {
			m.answered(&events[i])
		}
		run = run[n:]
	}
}

// kindNames returns the names of the registered fault kinds.
func kindNames() []string {
	var names []string
	for _, k := range faults.Kinds() {
		names = append(names, k.Name)
	}
	return names
}

// owesReconnect reports whether a client should come back with a GET after
// a stream of type st ended by cause: a POST stream or a resumed one that
// ended before it carried its response, or a standalone GET stream, ended
// by the upstream or by a fault rather than by the client leaving.
func owesReconnect(st mcp.StreamType, cause observe.Cause, answered bool) bool {
	switch cause {
	case observe.ClientGone, observe.FaultAnswered:
		return false
	}
	switch st {
	case mcp.StreamPost, mcp.StreamResume:
		return !answered
	case mcp.StreamGet:
		return true
	}
	return false
}

// findingsCollector exposes the verifier's findings per check at scrape
// time.
func findingsCollector(source func() []report.Check) prometheus.Collector {
	desc := prometheus.NewDesc("fray_findings_total", "Findings of the verifier so far, by check id.", []string{"check"}, nil)
	return &findings{desc: desc, source: source}
}

type findings struct {
	desc   *prometheus.Desc
	source func() []report.Check
}

func (f *findings) Describe(ch chan<- *prometheus.Desc) { ch <- f.desc }

func (f *findings) Collect(ch chan<- prometheus.Metric) {
	for _, c := range f.source() {
		ch <- prometheus.MustNewConstMetric(f.desc, prometheus.CounterValue, float64(c.Count), c.ID)
	}
}

// latencyBounds returns LatencyBuckets as client_golang's histogram takes
// its buckets: a last +Inf, which every histogram has, is dropped, and
// bounds not in increasing order panic, with its message.
func latencyBounds() []float64 {
	b := slices.Clone(LatencyBuckets)
	if n := len(b); n > 0 && math.IsInf(b[n-1], +1) {
		b = b[:n-1]
	}
	for i := 1; i < len(b); i++ {
		if b[i] <= b[i-1] {
			panic(fmt.Sprintf("histogram buckets must be in increasing order: %f >= %f", b[i-1], b[i]))
		}
	}
	return b
}
