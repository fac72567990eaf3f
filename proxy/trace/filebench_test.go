package trace

import (
	"path/filepath"
	"testing"

	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// BenchmarkObserveEventFile is BenchmarkObserveEvent with the trace
// written to a file, as --trace does: the encoding and the writes.
func BenchmarkObserveEventFile(b *testing.B) {
	w, err := Create(filepath.Join(b.TempDir(), "t.jsonl"), WriterOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	raw := []byte("id: 17\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":17}}\n\n")
	o := &observe.Observation{Kind: observe.KindEvent, Exchange: 3, Stream: mcp.StreamPost, Session: "0a1b2c", SessionSeq: 1,
		Protocol: "2025-11-25", Event: &observe.Event{Event: mcp.Event{Index: 17, Raw: raw, Parsed: true, ID: raw[4:6], HasID: true, Dispatched: true, RPCKind: mcp.RPCNotification, RPCMethod: []byte("notifications/progress")}, Scanned: true, Fate: observe.Delivered, DeliveredID: raw[4:6], DeliveredHasID: true, Copies: 1}}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		w.Observe(o)
	}
}
