package trace

import "testing"

// benchRaw is a progress notification as the stream benchmark's upstream
// sends it: JSON, a quote every few bytes.
var benchRaw = []byte("id: 1234567\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"seq\":1234567,\"t\":1764012345678901234}}\n\n")

// BenchmarkEscapeRaw measures the escaping of one event's raw block, the
// most of a traced event's line.
func BenchmarkEscapeRaw(b *testing.B) {
	buf := make([]byte, 0, 1024)
	b.SetBytes(int64(len(benchRaw)))
	for b.Loop() {
		buf, _ = appendValidString(buf[:0], benchRaw)
	}
}

// benchText is a tool result in a language written outside ASCII, as an
// event's raw block can carry one.
var benchText = []byte("data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"" +
	"東京の天気は晴れ、最高気温は二十三度です。明日は雨の予報で、傘をお持ちください。Привет, мир! Ünïcödé ✓ 😀\"}]}}\n\n")

// BenchmarkEscapeText is BenchmarkEscapeRaw on text mostly outside ASCII.
func BenchmarkEscapeText(b *testing.B) {
	buf := make([]byte, 0, 1024)
	b.SetBytes(int64(len(benchText)))
	for b.Loop() {
		buf, _ = appendValidString(buf[:0], benchText)
	}
}
