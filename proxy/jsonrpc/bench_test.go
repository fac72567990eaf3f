package jsonrpc

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/frayproxy/fray/proxy/mcp"
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

// BenchmarkScanVaried scans 512 different messages of each kind in turn:
// names, numbers and strings of varying lengths, as a stream carries them.
// Unlike BenchmarkScan, whose one message the branch predictor learns by
// heart, it shows what a skip costs when its loops end where they were not
// expected to.
func BenchmarkScanVaried(b *testing.B) {
	for _, kind := range []string{"progress", "toolresult"} {
		msgs := variedMessages(kind, 512)
		size := 0
		for _, m := range msgs {
			if Scan(m).Kind == mcp.RPCNone {
				b.Fatalf("%s: %s is not a message", kind, m)
			}
			size += len(m)
		}
		b.Run(kind, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(size / len(msgs)))
			k := 0
			for b.Loop() {
				sink = Scan(msgs[k])
				if k++; k == len(msgs) {
					k = 0
				}
			}
		})
	}
}

// variedMessages returns n messages of the kind, a notifications/progress
// or a tool result, built from a fixed seed.
func variedMessages(kind string, n int) [][]byte {
	r := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields(`the a forecast for Paris light rain in afternoon wind km/h from west working on step file read done of tool result call é \n \" \u00e9`)
	text := func(max int) string {
		w := make([]string, r.IntN(max)+1)
		for i := range w {
			w[i] = words[r.IntN(len(words))]
		}
		return strings.Join(w, " ")
	}
	msgs := make([][]byte, n)
	for i := range msgs {
		var s string
		switch kind {
		case "progress":
			token := strconv.Itoa(r.IntN(1000))
			if r.IntN(2) == 0 {
				token = `"tok-` + strconv.Itoa(r.IntN(100000)) + `"`
			}
			s = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` + token +
				`,"progress":` + strconv.Itoa(r.IntN(100000)) + `,"total":` + strconv.Itoa(r.IntN(10000000)) +
				`,"message":"` + text(4) + `"}}`
		case "toolresult":
			s = `{"jsonrpc":"2.0","id":` + strconv.Itoa(r.IntN(10000)) + `,"result":{"content":[{"type":"text","text":"` + text(30) +
				`"}],"structuredContent":{"city":"` + text(2) + `","tempC":` + strconv.Itoa(r.IntN(40)) + `,"rain":true},"isError":false}}`
		}
		msgs[i] = []byte(s)
	}
	return msgs
}
