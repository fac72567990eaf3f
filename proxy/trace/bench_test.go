package trace

import (
	"bytes"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// observeEvent traces one ~90-byte event through w, again and again.
func observeEvent(b *testing.B, w *Writer) {
	raw := []byte("id: 17\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":17}}\n\n")
	o := &observe.Observation{Kind: observe.KindEvent, Exchange: 3, Stream: mcp.StreamPost, Session: "0a1b2c", SessionSeq: 1,
		Protocol: "2025-11-25", Event: &observe.Event{Event: mcp.Event{Index: 17, Raw: raw, Parsed: true, ID: raw[4:6], HasID: true, Dispatched: true, RPCKind: mcp.RPCNotification, RPCMethod: []byte("notifications/progress")}, Scanned: true, Fate: observe.Delivered, DeliveredID: raw[4:6], DeliveredHasID: true, Copies: 1}}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		w.Observe(o)
	}
}

// BenchmarkObserveEvent measures what tracing one ~90-byte event costs the
// proxy's per-event path.
func BenchmarkObserveEvent(b *testing.B) {
	w := writerTo(b, io.Discard, WriterOptions{})
	observeEvent(b, w)
}

// BenchmarkObserveEventFile is BenchmarkObserveEvent with the trace
// written to a file, as --trace does: the encoding and the writes.
func BenchmarkObserveEventFile(b *testing.B) {
	w, err := Create(filepath.Join(b.TempDir(), "t.jsonl"), WriterOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	observeEvent(b, w)
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
			w := writerTo(b, io.Discard, WriterOptions{})
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

// benchRaw is a progress notification as the stream benchmark's upstream
// sends it: JSON, a quote every few bytes.
var benchRaw = []byte("id: 1234567\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"seq\":1234567,\"t\":1764012345678901234}}\n\n")

// benchText is a tool result in a language written outside ASCII, as an
// event's raw block can carry one.
var benchText = []byte("data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"" +
	"東京の天気は晴れ、最高気温は二十三度です。明日は雨の予報で、傘をお持ちください。Привет, мир! Ünïcödé ✓ 😀\"}]}}\n\n")

// BenchmarkEscapeRaw measures the escaping of one event's raw block, the
// most of a traced event's line.
func BenchmarkEscapeRaw(b *testing.B) { escape(b, benchRaw) }

// BenchmarkEscapeText is BenchmarkEscapeRaw on text mostly outside ASCII.
func BenchmarkEscapeText(b *testing.B) { escape(b, benchText) }

// escape escapes text, again and again.
func escape(b *testing.B, text []byte) {
	buf := make([]byte, 0, 1024)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		buf, _ = appendValidString(buf[:0], text)
	}
}
