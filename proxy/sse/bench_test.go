package sse

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

const smallEvent = "id: 12345\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n"

// stream repeats block up to about size bytes.
func stream(block string, size int) []byte {
	return []byte(strings.Repeat(block, max(size/len(block), 1)))
}

// pump is the proxy's per-event path: read each event and write it into a
// reused buffer, applying edit first when there is one.
func pump(b *testing.B, input []byte, edit func(*Event)) {
	b.SetBytes(int64(len(input)))
	b.ReportAllocs()
	src := bytes.NewReader(input)
	r := NewReader(src, 0)
	out := make([]byte, 0, 256<<10)
	for b.Loop() {
		src.Reset(input)
		r.Reset(src)
		for {
			e, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if edit != nil {
				edit(e)
			}
			out = e.AppendTo(out[:0])
		}
	}
}

func BenchmarkReader(b *testing.B) {
	b.Run("small", func(b *testing.B) { pump(b, stream(smallEvent, 1<<20), nil) })
	b.Run("small-CRLF", func(b *testing.B) {
		pump(b, stream(strings.ReplaceAll(smallEvent, "\n", "\r\n"), 1<<20), nil)
	})
	b.Run("64KiB", func(b *testing.B) {
		pump(b, stream("data: "+strings.Repeat("x", 64<<10)+"\n\n", 4<<20), nil)
	})
	// A proxy that strips retry calls RemoveField on every event: once with
	// a retry line in every block, once with none (the usual traffic).
	b.Run("strip-retry", func(b *testing.B) {
		block := "retry: 3000\n" + smallEvent
		pump(b, stream(block, 1<<20), func(e *Event) { e.RemoveField("retry") })
	})
	b.Run("strip-retry-absent", func(b *testing.B) {
		pump(b, stream(smallEvent, 1<<20), func(e *Event) { e.RemoveField("retry") })
	})
	b.Run("set-retry", func(b *testing.B) {
		v := []byte("3000")
		pump(b, stream(smallEvent, 1<<20), func(e *Event) { e.SetField("retry", v) })
	})
}

// BenchmarkChunkBlocks: the count of blocks in each chunk a paced stream
// reads, one event a read.
func BenchmarkChunkBlocks(b *testing.B) {
	chunk := []byte(smallEvent)
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		if n, ok := chunkBlocks(chunk); n != 1 || !ok {
			b.Fatalf("chunkBlocks = %d, %v", n, ok)
		}
	}
}
