package trace

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// BenchmarkObserveEvent measures what tracing one ~90-byte event costs the
// proxy's per-event path.
func BenchmarkObserveEvent(b *testing.B) {
	w, err := NewWriter(io.Discard, WriterOptions{})
	if err != nil {
		b.Fatal(err)
	}
	raw := []byte("id: 17\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":17}}\n\n")
	o := &observe.Observation{Kind: observe.KindEvent, Exchange: 3, Stream: mcp.StreamPost, Session: "0a1b2c", SessionSeq: 1,
		Protocol: "2025-11-25", Event: &observe.Event{Event: mcp.Event{Index: 17, Raw: raw, Parsed: true, ID: raw[4:6], HasID: true, Dispatched: true, RPCKind: mcp.RPCNotification, RPCMethod: []byte("notifications/progress")}, Scanned: true, Fate: observe.Delivered, DeliveredID: raw[4:6], DeliveredHasID: true, Copies: 1}}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		w.Observe(o)
	}
}

// BenchmarkObserveBulkEvent is BenchmarkObserveEvent with the event of
// the proxy's stream benchmark (BenchmarkStream/bulk): a ~140-byte
// progress notification, times and indexes of a run well under way. Its
// data is a part of its block, as the proxy reports it, and so is written
// as raw_parts; data-elsewhere is the same event with its data a copy
// (as a block of several data lines has it), written as an escaped raw.
func BenchmarkObserveBulkEvent(b *testing.B) {
	raw := benchRaw
	data := raw[bytes.Index(raw, []byte("{")) : len(raw)-2]
	for _, bm := range []struct {
		name string
		data []byte
	}{{"as-reported", data}, {"data-elsewhere", bytes.Clone(data)}} {
		b.Run(bm.name, func(b *testing.B) {
			w, err := NewWriter(io.Discard, WriterOptions{})
			if err != nil {
				b.Fatal(err)
			}
			at := 2345678 * time.Microsecond
			o := &observe.Observation{Kind: observe.KindEvent, At: at, Exchange: 3, Stream: mcp.StreamGet, Session: "0a1b2c3d4e5f", SessionSeq: 1,
				Protocol: "2025-11-25", Event: &observe.Event{Event: mcp.Event{Index: 123456, Raw: raw, Parsed: true, ID: raw[4:11], HasID: true, Dispatched: true,
					Data: bm.data, RPCKind: mcp.RPCNotification, RPCMethod: []byte("notifications/progress")}, Scanned: true,
					Fate: observe.Delivered, DeliveredAt: at, DeliveredID: raw[4:11], DeliveredHasID: true, Copies: 1}}
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				w.Observe(o)
			}
		})
	}
}
