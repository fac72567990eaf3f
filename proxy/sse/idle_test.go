package sse

import (
	"io"
	"testing"
)

// probeReader returns its pieces one per read and notes, at each read,
// whether the Reader reading it held a buffer.
type probeReader struct {
	r      *Reader
	pieces []string
	held   []bool
}

func (p *probeReader) Read(b []byte) (int, error) {
	p.held = append(p.held, p.r.buf != nil)
	if len(p.pieces) == 0 {
		return 0, io.EOF
	}
	n := copy(b, p.pieces[0])
	p.pieces[0] = p.pieces[0][n:]
	if p.pieces[0] == "" {
		p.pieces = p.pieces[1:]
	}
	return n, nil
}

// TestIdleReaderHoldsNoBuffer: a Reader waiting for its source with
// nothing buffered holds no buffer; one waiting for the rest of a block
// keeps it, and the block is whole; a buffer grown by a block larger than
// the burst buffer is kept.
func TestIdleReaderHoldsNoBuffer(t *testing.T) {
	large := "data: " + string(make([]byte, 2*burstRead)) + "\n\n"
	src := &probeReader{pieces: []string{"data: a\n\n", "data: b\n\n", "data: c", "\n\n", large, "data: d\n\n"}}
	r := NewReader(src, 0)
	src.r = r
	var data []string
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data = append(data, string(e.Data))
	}
	if len(data) != 5 || data[0] != "a" || data[1] != "b" || data[2] != "c" || len(data[3]) != 2*burstRead || data[4] != "d" {
		t.Fatalf("events %q", data)
	}
	// Reads: "data: a\n\n" (idle), "data: b\n\n" (idle), "data: c" (idle),
	// "\n\n" (mid-block: held), then the large block: its first bytes
	// idle, the rest held while it grows; after it, "data: d" and EOF
	// with the grown buffer kept.
	want := []bool{false, false, false, true, false}
	for i, w := range want {
		if src.held[i] != w {
			t.Errorf("read %d: held a buffer = %v, want %v (all: %v)", i, src.held[i], w, src.held)
		}
	}
	if last := src.held[len(src.held)-1]; !last || len(r.buf) <= minRead {
		t.Errorf("after a large block: held %v, buffer %d bytes; want the grown buffer kept", last, len(r.buf))
	}
}

// TestIdleReaderAllocatesNothing: reading event after event, each in a read
// of its own so that the Reader goes idle between them, allocates nothing
// once the pool holds a buffer.
func TestIdleReaderAllocatesNothing(t *testing.T) {
	src := &loopReader{event: []byte("id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n")}
	r := NewReader(src, 0)
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(1000, func() { _, _ = r.Next() }); n != 0 {
		t.Errorf("%v allocations per event, want 0", n)
	}
}

// loopReader is event repeated for ever, each read ending at the end of
// an event.
type loopReader struct {
	event []byte
	off   int
}

func (l *loopReader) Read(b []byte) (int, error) {
	n := copy(b, l.event[l.off:])
	l.off = (l.off + n) % len(l.event)
	return n, nil
}
