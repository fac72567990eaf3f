package jsonrpc

import (
	"testing"

	"github.com/frayproxy/fray/mcp"
)

var benchMessages = []struct {
	name string
	kind mcp.RPCKind
	data string
}{
	{"progress", mcp.RPCNotification,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok-17","progress":42,"total":100,"message":"working"}}`},
	{"progress-numeric", mcp.RPCNotification,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":48213,"total":1000000,"sentAt":1764012345678}}`},
	{"toolresult", mcp.RPCResponse,
		`{"jsonrpc":"2.0","id":17,"result":{"content":[{"type":"text","text":"The forecast for Paris: 18\u00b0C, light rain in the afternoon, wind 12 km/h from the west."}],"structuredContent":{"city":"Paris","tempC":18,"rain":true},"isError":false}}`},
}

// sink keeps the compiler from dropping the scans.
var sink Message

func BenchmarkScan(b *testing.B) {
	for _, bm := range benchMessages {
		data := []byte(bm.data)
		if m := Scan(data); m.Kind != bm.kind {
			b.Fatalf("%s: Kind = %v, want %v", bm.name, m.Kind, bm.kind)
		}
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				sink = Scan(data)
			}
		})
	}
}
