package trace

import (
	"bytes"
	"testing"

	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// sizes records the length of each write.
type sizes struct {
	bytes.Buffer
	n []int
}

func (s *sizes) Write(p []byte) (int, error) {
	s.n = append(s.n, len(p))
	return s.Buffer.Write(p)
}

// TestWritesAreWholeChunks: the Writer writes writeSize bytes at a time,
// or a multiple of it after a line longer than that, and keeps less than
// writeSize gathered between observations; Close writes the rest.
func TestWritesAreWholeChunks(t *testing.T) {
	var out sizes
	w, err := NewWriter(&out, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2000 {
		raw := []byte("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n")
		if i%500 == 7 {
			raw = bytes.Repeat([]byte(`"quoted"`), 40000) // a line of ~480 KiB
		}
		w.Observe(&observe.Observation{Kind: observe.KindEvent, Exchange: 1, Stream: mcp.StreamPost,
			Event: &observe.Event{Event: mcp.Event{Index: i, Raw: raw}}})
		if kept := len(w.e.b); kept >= writeSize {
			t.Fatalf("after observation %d, %d bytes kept", i, kept)
		}
	}
	written := out.Len()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(out.n) < 2 {
		t.Fatalf("%d writes", len(out.n))
	}
	for i, n := range out.n[:len(out.n)-1] {
		if n == 0 || n%writeSize != 0 {
			t.Fatalf("write %d of %d bytes, not a multiple of %d", i, n, writeSize)
		}
	}
	if last := out.n[len(out.n)-1]; out.Len() != written+last || last >= writeSize+200 {
		t.Fatalf("Close wrote %d bytes, %d after %d", last, out.Len(), written)
	}
}
