package sse

import (
	"errors"
	"io"
	"slices"
	"testing"
)

// probeReader delivers its pieces as a socket would, as much of the
// current piece as fits in each read, and notes how much room each read
// offered and whether the Reader held a buffer then.
type probeReader struct {
	r      *Reader
	pieces []string
	room   []int
	held   []bool
}

func (p *probeReader) Read(b []byte) (int, error) {
	p.room = append(p.room, len(b))
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
// the largest pooled buffer is kept.
func TestIdleReaderHoldsNoBuffer(t *testing.T) {
	large := "data: " + string(make([]byte, 2*bulkRead)) + "\n\n"
	src := &probeReader{pieces: []string{"data: a\n\n", "data: b\n\n", "data: c", "\n\n", large, "data: d\n\n"}}
	r := NewReader(src, 0)
	src.r = r
	var data []string
	eachEvent(t, r, func(e *Event) {
		data = append(data, string(e.Data))
	})
	if len(data) != 5 || data[0] != "a" || data[1] != "b" || data[2] != "c" || len(data[3]) != 2*bulkRead || data[4] != "d" {
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

// waitReader is probeReader that can wait without a buffer (a Waiter): it
// notes, at each wait, whether the Reader held a buffer, and fails the
// wait with failWait once its pieces are gone.
type waitReader struct {
	probeReader
	waits    []bool // per wait: the Reader held a buffer
	failWait error
}

func (w *waitReader) WaitRead() error {
	w.waits = append(w.waits, w.r.buf != nil)
	if len(w.pieces) == 0 && w.failWait != nil {
		return w.failWait
	}
	return nil
}

// TestWaiterTakesAnEventInOneRead: a Reader of a Waiter with nothing
// buffered waits there holding no buffer, then reads what came in one
// read into a pooled buffer, not a first few bytes into its small array
// and the rest in a second read; a block cut by a read is completed by a
// read without a wait; an error of the wait ends the stream after the
// events before it.
func TestWaiterTakesAnEventInOneRead(t *testing.T) {
	ev := "id: 7\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":7}}\n\n"
	if len(ev) <= idleRead {
		t.Fatalf("event of %d bytes: want more than the small array's %d", len(ev), idleRead)
	}
	gone := errors.New("upstream gone")
	src := &waitReader{probeReader: probeReader{pieces: []string{ev, ev, "data: c", "\n\n"}}, failWait: gone}
	r := NewReader(src, 0)
	src.r = r
	events, err := drain(r)
	if err != gone || len(events) != 3 || events[2].Data != "c" {
		t.Fatalf("events %+v, then %v; want 3 events, then %v", events, err, gone)
	}
	// Waits before each piece but the one that completes "data: c", and
	// before the end; none with a buffer held.
	if len(src.waits) != 4 || slices.Contains(src.waits, true) {
		t.Errorf("waits %v (buffer held at each); want 4, none holding a buffer", src.waits)
	}
	// One read per event, each offered a pooled buffer, not the small array.
	want := []int{minRead, minRead, minRead, minRead - len("data: c")}
	if !slices.Equal(src.room, want) {
		t.Errorf("reads offered %v bytes; want %v", src.room, want)
	}
}
