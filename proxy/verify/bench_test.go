package verify

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// BenchmarkObserveEvent measures what the verifier costs the proxy's
// per-event path: one delivered progress notification with a new id on a
// session's standalone GET stream, the id windows full (steady state).
func BenchmarkObserveEvent(b *testing.B) {
	event := benchEvents()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		event()
	}
}

// BenchmarkObserveEventCold is BenchmarkObserveEvent for an event that
// finds the verifier out of the nearer caches, as each event of a stream
// that waits between events does (the paced regime of the proxy's
// BenchmarkStream): before each event it writes over coldSpan bytes. It
// reports the median time of the events alone (cold-p50-ns); ns/op
// includes the writing and means nothing here. For a steadier median,
// more events:
//
//	go test -run XXX -bench BenchmarkObserveEventCold -benchtime 2000x ./proxy/verify/
func BenchmarkObserveEventCold(b *testing.B) {
	event := benchEvents()
	flood := make([]byte, coldSpan)
	took := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		for j := range flood {
			flood[j] = byte(i + j)
		}
		start := time.Now()
		event()
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "cold-p50-ns")
}

// coldSpan is what BenchmarkObserveEventCold writes between two events:
// more than a core's second-level cache holds on a typical server (1 MiB),
// less than a last-level cache (tens of MiB): what a paced stream's
// verifier meets between two events of a busy proxy.
const coldSpan = 4 << 20

// benchEvents sets a verifier up with a session's standalone GET stream
// whose id windows are full, and returns a function that observes one
// more delivered progress notification on it, with a new id.
func benchEvents() (event func()) {
	v := New(Options{})
	s := newSoak(v)
	s.sess = "bench-session"
	s.seq = 1
	ex := s.request("GET", mcp.StreamGet, "")
	s.respond(ex, mcp.StreamGet, 200, true, "")
	var id, raw []byte
	method := []byte("notifications/progress")
	seq := 0
	event = func() {
		seq++
		id = strconv.AppendInt(append(id[:0], "ev-"...), int64(seq), 10)
		raw = append(append(append(raw[:0], "id: "...), id...), "\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n"...)
		s.at += time.Microsecond
		s.ev = observe.Event{Event: mcp.Event{Index: seq, Raw: raw, Parsed: true, ID: id, HasID: true, Dispatched: true,
			Data: raw[len(id)+11 : len(raw)-2], RPCKind: mcp.RPCNotification, RPCMethod: method},
			Fate: observe.Delivered, Copies: 1, DeliveredAt: s.at, DeliveredID: id, DeliveredHasID: true}
		s.observe(observe.KindEvent, ex, mcp.StreamGet)
	}
	for range 2 * idWindow {
		event()
	}
	return event
}
