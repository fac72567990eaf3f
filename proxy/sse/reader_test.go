package sse

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

func TestBOM(t *testing.T) {
	tests := []struct {
		name   string
		input  string
		bom    []bool
		data   []string
		sizes  []int
		prefix int
	}{
		{name: "stripped at start", input: "\xEF\xBB\xBFdata: x\n\n", bom: []bool{true}, data: []string{"x"}},
		{name: "split over reads", input: "\xEF\xBB\xBFdata: x\n\n", bom: []bool{true}, data: []string{"x"}, sizes: []int{1}},
		{name: "later is a character", input: "data: a\n\n\xEF\xBB\xBFdata: b\n\n",
			bom: []bool{false, false}, data: []string{"a"}},
		{name: "twice", input: "\xEF\xBB\xBF\xEF\xBB\xBFdata: b\n\n", bom: []bool{true}},
		{name: "alone", input: "\xEF\xBB\xBF", bom: []bool{true}},
		{name: "part of one", input: "\xEF\xBB", bom: []bool{false}},
		{name: "empty block", input: "\xEF\xBB\xBF\r", bom: []bool{true}, sizes: []int{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events, err := readAll(t, &chunkReader{data: []byte(tt.input), sizes: tt.sizes}, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := rawOf(events); got != tt.input {
				t.Errorf("Raw = %q, want %q", got, tt.input)
			}
			var boms []bool
			var data []string
			for _, e := range events {
				boms = append(boms, e.BOM)
				if e.Dispatched {
					data = append(data, e.Data)
				}
			}
			if !reflect.DeepEqual(boms, tt.bom) || !reflect.DeepEqual(data, tt.data) {
				t.Errorf("BOM flags %v data %q, want %v %q", boms, data, tt.bom, tt.data)
			}
		})
	}
}

func TestLines(t *testing.T) {
	input := "\xEF\xBB\xBF: hi\r\nevent:up\r\ndata\r\nid:  x\r\nretry: 10\r\n\r\n"
	events, _ := readAll(t, strings.NewReader(input), 0)
	r := NewReader(strings.NewReader(input), 0)
	e, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	type line struct {
		Name, Value, Raw string
		Comment          bool
	}
	var got []line
	for _, l := range e.Lines {
		got = append(got, line{string(l.Name), string(l.Value), string(l.Raw), l.Comment})
	}
	want := []line{
		{"", " hi", ": hi\r\n", true},
		{"event", "up", "event:up\r\n", false},
		{"data", "", "data\r\n", false},
		{"id", " x", "id:  x\r\n", false},
		{"retry", "10", "retry: 10\r\n", false},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("lines = %+v\nwant %+v", got, want)
	}
	if s := events[0]; s.Type != "up" || s.Data != "" || s.ID != " x" || !s.HasID || s.Retry != 10 || !s.Dispatched || !s.BOM {
		t.Errorf("client view = %+v", s)
	}
}

func TestRetryValues(t *testing.T) {
	for _, tt := range []struct {
		in   string
		ok   bool
		want int64
	}{
		{"0", true, 0}, {"02000", true, 2000}, {"", false, 0}, {"1000x", false, 0}, {"+5", false, 0},
		{"-1", false, 0}, {" 5", false, 0}, {"99999999999999999999999", true, 1<<63 - 1},
		{"9223372036854775807", true, 1<<63 - 1}, {"9223372036854775806", true, 1<<63 - 2},
	} {
		got, ok := parseRetry([]byte(tt.in))
		if ok != tt.ok || got != tt.want {
			t.Errorf("parseRetry(%q) = %d, %v, want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

var errBroken = errors.New("connection reset")

func TestReadErrorAfterBufferedBlocks(t *testing.T) {
	src := io.MultiReader(strings.NewReader("data: a\n\ndata: b\n\ndata: c"), iotest.ErrReader(errBroken))
	r := NewReader(src, 0)
	events, err := drain(r)
	if !errors.Is(err, errBroken) {
		t.Fatalf("Next error = %v, want %v", err, errBroken)
	}
	var data []string
	for _, e := range events {
		if e.Dispatched {
			data = append(data, e.Data)
		}
	}
	if raw := rawOf(events); raw != "data: a\n\ndata: b\n\ndata: c" || !reflect.DeepEqual(data, []string{"a", "b"}) {
		t.Errorf("read %q dispatching %q before the error", raw, data)
	}
	if _, again := r.Next(); !errors.Is(again, errBroken) {
		t.Errorf("second Next error = %v, want the same error again", again)
	}
}

func TestDataAndErrorInOneRead(t *testing.T) {
	events, err := readAll(t, iotest.DataErrReader(strings.NewReader("data: a\n\ndata: b")), 0)
	if err != nil || len(events) != 2 || !events[0].Dispatched || events[1].Complete {
		t.Errorf("events %+v err %v, want a then a cut block", events, err)
	}
}

type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, nil }

func TestNoProgress(t *testing.T) {
	_, err := NewReader(emptyReader{}, 0).Next()
	if !errors.Is(err, io.ErrNoProgress) {
		t.Errorf("Next on a reader that never delivers = %v, want io.ErrNoProgress", err)
	}
}

func TestZeroReader(t *testing.T) {
	var r Reader
	if _, err := r.Next(); err == nil {
		t.Error("Next on a zero Reader succeeded")
	}
	r.Reset(strings.NewReader("data: z\n\n"))
	e, err := r.Next()
	if err != nil || string(e.Data) != "z" || r.max != DefaultMaxBlock {
		t.Errorf("after Reset: %v %v max %d", e, err, r.max)
	}
}

func TestReset(t *testing.T) {
	r := NewReader(&chunkReader{data: []byte("\xEF\xBB\xBFdata: a\r"), sizes: []int{5}}, 64)
	_, _ = drain(r)
	r.Reset(strings.NewReader("\ndata: b\n\n"))
	events, _ := drain(r)
	// A new stream owes nothing to the old one: no BOM check carried over,
	// no pending LF from the old stream's CR.
	if len(events) != 2 || events[0].Raw != "\n" || events[1].Data != "b" {
		t.Errorf("events after Reset = %+v", events)
	}
	if r.max != 64 {
		t.Error("Reset dropped the block limit")
	}
}

func TestBoundedMemory(t *testing.T) {
	const maxBlock = 1 << 20
	input := make([]byte, 10<<20)
	for i := range input {
		input[i] = 'a' + byte(i%26)
	}
	copy(input, "data: ")
	input = append(input, "\n\ndata: after\n\n"...)
	for _, sizes := range [][]int{nil, {4096}, {1<<20 + 7}} {
		r := NewReader(&chunkReader{data: input, sizes: sizes}, maxBlock)
		var out []byte
		unparsed, parsed := 0, 0
		eachEvent(t, r, func(e *Event) {
			if e.Unparsed {
				unparsed++
			} else if unparsed > 0 {
				t.Fatal("a parsed event after an Unparsed one")
			} else {
				parsed++
			}
			out = e.AppendTo(out)
			if c := cap(r.buf); c > maxBlock+minRead {
				t.Fatalf("buffer capacity %d, want at most %d", c, maxBlock+minRead)
			}
		})
		if !bytes.Equal(out, input) {
			t.Errorf("sizes %v: output differs from input (%d bytes, want %d)", sizes, len(out), len(input))
		}
		if parsed != 0 || unparsed < 2 {
			t.Errorf("sizes %v: %d parsed and %d Unparsed events, want only Unparsed ones", sizes, parsed, unparsed)
		}
	}
}

func TestBlockLimitIndependentOfReads(t *testing.T) {
	input := "data: 0123456789\n\ndata: " + strings.Repeat("x", 40) + "\n\ndata: z\n\n"
	for _, sizes := range [][]int{nil, {1}, {3}, {50}} {
		events, err := readAll(t, &chunkReader{data: []byte(input), sizes: sizes}, 32)
		if err != nil {
			t.Fatal(err)
		}
		if rawOf(events) != input {
			t.Errorf("sizes %v: Raw differs from input", sizes)
		}
		if len(events) < 2 || !events[0].Dispatched || events[0].Data != "0123456789" || !events[1].Unparsed {
			t.Errorf("sizes %v: events %+v, want one parsed block then Unparsed ones", sizes, events)
		}
	}
}

func TestSeekSearchesOnce(t *testing.T) {
	// A stream of bare-CR lines has no LF: the search for LF must remember
	// that it reached the end rather than search the rest of the buffer
	// again for every line.
	b := []byte("data: x\rdata: y\r")
	var s seek
	if i := s.next(b, 0, '\n'); i != -1 || s.at != len(b) {
		t.Fatalf("next = %d, at %d; want -1 at %d", i, s.at, len(b))
	}
	b[3] = '\n' // not looked at again: the bytes before at are known
	if i := s.next(b, 8, '\n'); i != -1 {
		t.Errorf("next searched bytes it had already searched: %d", i)
	}
	b = append(b, "a\nb\n"...)
	if i := s.next(b, 8, '\n'); i != 17 {
		t.Errorf("next after more bytes = %d, want 17", i)
	}
	if i := s.next(b, 10, '\n'); i != 17 {
		t.Errorf("next from before a found byte = %d, want 17", i)
	}
	if i := s.next(b, 18, '\n'); i != 19 {
		t.Errorf("next past a found byte = %d, want 19", i)
	}
}

func TestWordSearches(t *testing.T) {
	// Every position of the byte sought, after every other byte value, must
	// be found where bytes.IndexByte finds it.
	for _, fill := range []byte{0, 'a', '\n' - 1, '\r' + 1, ':' - 1, ':' + 1, 0x80, 0xFF} {
		for n := 0; n <= 24; n++ {
			for at := -1; at < n; at++ {
				b := bytes.Repeat([]byte{fill}, n)
				for _, c := range []byte{'\n', '\r', ':', 0} {
					if at >= 0 {
						b[at] = c
					}
					want := bytes.IndexAny(b, "\r\n")
					var r Reader
					if got := r.eol(b, 0); got != want {
						t.Fatalf("eol(%q) = %d, want %d", b, got, want)
					}
					if got, want := colon(b), bytes.IndexByte(b, ':'); got != want {
						t.Fatalf("colon(%q) = %d, want %d", b, got, want)
					}
					if got, want := hasNUL(b), bytes.IndexByte(b, 0) >= 0; got != want {
						t.Fatalf("hasNUL(%q) = %v, want %v", b, got, want)
					}
				}
			}
		}
	}
}

// TestManyShortLines: a block of very many tiny lines, within the byte
// limit, would cost its Reader about 100 bytes a line; past the line cap it
// passes through unparsed, byte for byte, and the line bookkeeping stays
// within the cap, however the reads break. A block just under the cap is
// still parsed.
func TestManyShortLines(t *testing.T) {
	const maxBlock = 1 << 20 // the cap is 16384 lines
	over := []byte(strings.Repeat(":\n", 200_000) + "\ndata: after\n\n")
	under := []byte(strings.Repeat(":\n", 16_000) + "data: x\n\n")
	for _, sizes := range [][]int{nil, {4096}, {7}} {
		r := NewReader(&chunkReader{data: over, sizes: sizes}, maxBlock)
		var out []byte
		eachEvent(t, r, func(e *Event) {
			if !e.Unparsed {
				t.Fatalf("sizes %v: a block of 200,000 lines was parsed", sizes)
			}
			out = e.AppendTo(out)
			if c := cap(r.spans); c > 2*r.maxLines() {
				t.Fatalf("sizes %v: %d line spans kept, want at most %d", sizes, c, 2*r.maxLines())
			}
		})
		if !bytes.Equal(out, over) {
			t.Errorf("sizes %v: output differs from input", sizes)
		}
		events, err := readAll(t, &chunkReader{data: under, sizes: sizes}, maxBlock)
		if err != nil {
			t.Fatal(err)
		}
		if len(events) != 1 || events[0].Unparsed || events[0].Data != "x" {
			t.Errorf("sizes %v: a block of 16,001 lines was not parsed as one event", sizes)
		}
	}
}

// probeReader is a piecesReader that notes how much room each read
// offered and whether its Reader r held a buffer then.
type probeReader struct {
	piecesReader
	r    *Reader
	room []int
	held []bool
}

// newProbe returns a probeReader of pieces and its Reader, of block limit max.
func newProbe(max int, pieces ...string) (*probeReader, *Reader) {
	src := &probeReader{piecesReader: piecesReader{pieces}}
	src.r = NewReader(src, max)
	return src, src.r
}

func (p *probeReader) Read(b []byte) (int, error) {
	p.room = append(p.room, len(b))
	p.held = append(p.held, p.r.buf != nil)
	return p.piecesReader.Read(b)
}

// TestIdleReaderHoldsNoBuffer: a Reader waiting for its source with
// nothing buffered holds no buffer; one waiting for the rest of a block
// keeps it, and the block is whole; a buffer grown by a block larger than
// the largest pooled buffer is kept.
func TestIdleReaderHoldsNoBuffer(t *testing.T) {
	large := "data: " + string(make([]byte, 2*bulkRead)) + "\n\n"
	src, r := newProbe(0, "data: a\n\n", "data: b\n\n", "data: c", "\n\n", large, "data: d\n\n")
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
	src := &waitReader{failWait: gone}
	src.pieces = []string{ev, ev, "data: c", "\n\n"}
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
