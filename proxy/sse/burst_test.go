package sse

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// readEach reads r to its end, requires every event to be ev, byte for
// byte, and returns how many there were.
func readEach(t *testing.T, r *Reader, ev string) int {
	t.Helper()
	n := 0
	eachEvent(t, r, func(e *Event) {
		if string(e.Raw) != ev {
			t.Fatalf("event %d: %q", n, e.Raw)
		}
		n++
	})
	return n
}

// TestBurstReadsWiden: while a burst keeps filling the buffer, the Reader
// reads up to burstRead bytes at a time, then up to bulkRead; when the
// burst ends with nothing buffered it gives the buffer back and waits
// holding none. Every event comes out whole.
func TestBurstReadsWiden(t *testing.T) {
	ev := "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\n"
	burst := strings.Repeat(ev, 1000) // ~86 KB, as one upstream write
	src, r := newProbe(0, burst, ev)
	n := readEach(t, r, ev)
	if n != 1001 {
		t.Fatalf("%d events, want 1001", n)
	}
	wide, after := 0, 0 // the reads wider than minRead; the read after the last of them
	for i, room := range src.room {
		if room > minRead {
			wide, after = wide+1, i+1
		}
	}
	// 86 KB: the idle read, one minRead read, one burstRead read, then
	// the rest in one bulkRead read.
	if reads := len(src.room); reads > 8 || wide < 2 || slices.Max(src.room) <= burstRead {
		t.Errorf("%d reads offering %v bytes; want the burst read %d, then %d bytes at a time", reads, src.room, burstRead, bulkRead)
	}
	// The first read after the burst waited with nothing buffered, into
	// the small array.
	if after >= len(src.room) || src.held[after] || src.room[after] != idleRead {
		t.Errorf("read %d (after the burst): held %v, room %v; want no buffer held (reads %v)", after, src.held, src.room, src.room)
	}
	if r.buf != nil {
		t.Errorf("after the stream: buffer of %d bytes held", len(r.buf))
	}
}

// TestBurstReadsStraightIntoBuffer: a burst whose reads each fill the
// buffer and end on an event's edge, so that the buffer empties after
// every read, is read a buffer at a time: the Reader does not go back to
// the small idle read while the reads keep filling the buffer, only once
// one comes back short. Every event comes out whole.
func TestBurstReadsStraightIntoBuffer(t *testing.T) {
	ev := "data: " + strings.Repeat("x", 56) + "\n\n" // 64 bytes: every buffer size is a multiple
	if len(ev) != idleRead {
		t.Fatalf("event of %d bytes, want %d", len(ev), idleRead)
	}
	// The idle read (one event), the small buffer, a burst buffer, then
	// two bulk buffers; then, after a wait, one event.
	n := (idleRead + minRead + burstRead + 2*bulkRead) / len(ev)
	src, r := newProbe(0, strings.Repeat(ev, n), ev)
	if got := readEach(t, r, ev); got != n+1 {
		t.Fatalf("%d events, want %d", got, n+1)
	}
	want := []int{idleRead, minRead, burstRead, bulkRead, bulkRead, bulkRead, idleRead}
	if !slices.Equal(src.room, want) {
		t.Errorf("reads offered %v bytes; want %v: no idle read while the reads fill the buffer", src.room, want)
	}
	// The read after the burst's last full read held the buffer, as the
	// cost of not guessing; the one after a short read held none.
	if len(src.held) == len(want) && (!src.held[5] || src.held[6]) {
		t.Errorf("buffer held at each read: %v; want held at read 5, not at read 6", src.held)
	}
}

// TestBurstKeepsSmallLimit: a Reader whose block limit is below a pooled
// buffer's size never takes that buffer, so its memory bound holds: below
// burstRead it keeps to minRead (and grows), below bulkRead it widens to
// burstRead only.
func TestBurstKeepsSmallLimit(t *testing.T) {
	ev := "data: " + strings.Repeat("x", 100) + "\n\n"
	for _, limit := range []int{1024, 64 << 10} {
		_, r := newProbe(limit, strings.Repeat(ev, 3*bulkRead/len(ev)))
		largest := 0
		for {
			if _, err := r.Next(); err != nil {
				break
			}
			largest = max(largest, cap(r.buf))
			if c := cap(r.buf); c > limit+minRead {
				t.Fatalf("limit %d: buffer capacity %d, want at most %d", limit, c, limit+minRead)
			}
		}
		if limit > burstRead && largest != burstRead {
			t.Errorf("limit %d: largest buffer %d, want the burst buffer (%d)", limit, largest, burstRead)
		}
	}
}

// TestBurstReadsAgreeWithSmallReads: a long stream of events of every
// size and line-end style, some larger than the burst buffer, read in
// large reads that keep filling the buffer (so that it widens, shifts and
// grows) gives the same events as read in tiny reads that never fill it:
// the same ids and data, and bytes that are the stream. (Where a CRLF's LF
// goes, and the pieces of an unparsed stream, depend on the reads by
// design, so the limits here parse every block.)
func TestBurstReadsAgreeWithSmallReads(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	var in []byte
	for range 3000 {
		eol := []string{"\n", "\r\n", "\r"}[rng.IntN(3)]
		n := rng.IntN(300)
		if rng.IntN(100) == 0 {
			n = burstRead + rng.IntN(2*burstRead)
		}
		in = append(in, "id: "+strconv.Itoa(rng.IntN(1000))+eol...)
		in = append(in, "data: "+strings.Repeat("x", n)+eol...)
		if rng.IntN(10) == 0 {
			in = append(in, ": comment"+eol...)
		}
		in = append(in, eol...)
	}
	events := func(src io.Reader, max int) (raws, data []string) {
		eachEvent(t, NewReader(src, max), func(e *Event) {
			raws = append(raws, string(e.Raw))
			data = append(data, fmt.Sprintf("%v %q %q", e.Unparsed, e.ID, e.Data))
		})
		return raws, data
	}
	for _, max := range []int{0, 4 * burstRead} {
		wantRaw, wantData := events(&chunkReader{data: in, sizes: []int{1, 3, 7}}, max)
		gotRaw, gotData := events(&chunkReader{data: in, sizes: []int{100000, 50000, 4096, 70000}}, max)
		if strings.Join(gotRaw, "") != string(in) {
			t.Fatalf("limit %d: the events' bytes are not the stream", max)
		}
		if strings.Join(wantRaw, "") != string(in) {
			t.Fatalf("limit %d: the events' bytes, read in tiny reads, are not the stream", max)
		}
		if len(gotData) != 3000 || !slices.Equal(gotData, wantData) {
			t.Errorf("limit %d: %d events read in large reads, %d in tiny ones, or they differ", max, len(gotData), len(wantData))
		}
	}
}
