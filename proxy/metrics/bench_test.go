package metrics_test

import (
	"testing"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/metrics"
	"github.com/frayproxy/fray/proxy/observe"
)

// eventObservation is a delivered progress notification on an open POST
// stream, with one fault firing, as the pump reports it.
func eventObservation() *observe.Observation {
	return &observe.Observation{
		Kind: observe.KindEvent, At: time.Second, Exchange: 7, Stream: mcp.StreamPost,
		Session: "s", SessionSeq: 1,
		Fired: []faults.Firing{{Index: 0, Kind: "delay"}},
		Event: &observe.Event{Event: mcp.Event{Index: 3, Raw: []byte("data: {}\n\n"), Parsed: true, Dispatched: true, RPCKind: mcp.RPCNotification, RPCMethod: []byte("notifications/progress")}, Fate: observe.Delivered, DeliveredAt: time.Second + 40*time.Microsecond, Copies: 1},
	}
}

// openStream reports the response head of exchange 7, so that its events
// are those of an open stream.
func openStream(m *metrics.Metrics) {
	m.Observe(&observe.Observation{Kind: observe.KindResponse, Exchange: 7, Stream: mcp.StreamPost,
		Response: &observe.Response{Status: 200, EventStream: true}})
}

// BenchmarkObserveEvent measures what the metrics cost per event: the
// counters, the added-latency histogram and one fault firing.
func BenchmarkObserveEvent(b *testing.B) {
	m := metrics.New(metrics.Options{NoRuntime: true})
	openStream(m)
	o := eventObservation()
	b.ReportAllocs()
	for b.Loop() {
		m.Observe(o)
	}
}

// BenchmarkObserveEventParallel is BenchmarkObserveEvent from every core at
// once, as many streams report at the same time.
func BenchmarkObserveEventParallel(b *testing.B) {
	m := metrics.New(metrics.Options{NoRuntime: true})
	openStream(m)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		o := eventObservation()
		for pb.Next() {
			m.Observe(o)
		}
	})
}

// TestObserveEventAllocatesNothing: counting an event, a response event
// included, allocates nothing.
func TestObserveEventAllocatesNothing(t *testing.T) {
	m := metrics.New(metrics.Options{NoRuntime: true})
	openStream(m)
	note := eventObservation()
	resp := eventObservation()
	resp.Event.RPCKind, resp.Event.RPCMethod, resp.Event.RPCID = mcp.RPCResponse, nil, []byte("2")
	for name, o := range map[string]*observe.Observation{"notification": note, "response": resp} {
		if n := testing.AllocsPerRun(1000, func() { m.Observe(o) }); n != 0 {
			t.Errorf("%s event: %v allocations per Observe, want 0", name, n)
		}
	}
}
