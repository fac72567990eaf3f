package verify

import (
	"strconv"
	"testing"
	"time"

	"github.com/frayproxy/fray/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// BenchmarkObserveEvent measures what the verifier costs the proxy's
// per-event path: one delivered progress notification with a new id on a
// session's standalone GET stream, the id windows full (steady state).
func BenchmarkObserveEvent(b *testing.B) {
	v := New(Options{})
	s := newSoak(v)
	s.sess = "bench-session"
	s.seq = 1
	ex := s.request("GET", mcp.StreamGet, "")
	s.respond(ex, mcp.StreamGet, 200, true, "")
	var id, raw []byte
	method := []byte("notifications/progress")
	seq := 0
	event := func() {
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
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		event()
	}
}
