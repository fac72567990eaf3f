package sse

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

// chunkSizes turns fuzz bytes into read sizes; none means one whole read.
func chunkSizes(b []byte) []int {
	var sizes []int
	for _, c := range b {
		sizes = append(sizes, int(c)%19+1)
	}
	return sizes
}

// checkLayout checks that an unmodified event's parts tile its Raw: the
// prefix, the raw lines in order and the terminating empty line.
func checkLayout(t *testing.T, e *Event) {
	t.Helper()
	if e.Unparsed {
		return
	}
	var b []byte
	b = append(b, e.Raw[:e.prefix]...)
	for _, l := range e.Lines {
		b = append(b, l.Raw...)
	}
	b = append(b, e.Raw[e.term:]...)
	if !bytes.Equal(b, e.Raw) {
		t.Fatalf("prefix, lines and end %q do not make up Raw %q", b, e.Raw)
	}
	if term := e.Raw[e.term:]; e.Complete != (len(term) > 0) || len(term) > 2 {
		t.Fatalf("terminating line %q for a block with Complete %v", term, e.Complete)
	}
}

func FuzzRoundTrip(f *testing.F) {
	f.Fuzz(func(t *testing.T, input, chunks []byte) {
		r := NewReader(&chunkReader{data: input, sizes: chunkSizes(chunks)}, 0)
		var out []byte
		var events []snap
		eachEvent(t, r, func(e *Event) {
			if e.Unparsed {
				t.Fatalf("Unparsed event from %d bytes of input", len(input))
			}
			checkLayout(t, e)
			events = append(events, snapshot(e))
			out = e.AppendTo(out)
		})
		if !bytes.Equal(out, input) {
			t.Fatalf("wrote %q, read %q", out, input)
		}
		got, want := clientView(events), refParse(input)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("client view %+v, reference %+v", got, want)
		}
		again, err := readAll(t, bytes.NewReader(out), 0)
		if err != nil {
			t.Fatal(err)
		}
		if v := clientView(again); !reflect.DeepEqual(v, got) {
			t.Fatalf("output read as %+v, input as %+v", v, got)
		}
		// Block by block too: how the reads broke may move an LF from the
		// end of one block to the start of the next, or leave an event
		// that is only that LF, but never change what a block means.
		if a, b := blockViews(again), blockViews(events); !reflect.DeepEqual(a, b) {
			t.Fatalf("blocks of the output %+v, of the input %+v", a, b)
		}

		// A small block limit sends most of the stream through unparsed;
		// the bytes must still come out whole.
		small := 8 + len(chunks)%32
		limited, err := readAll(t, &chunkReader{data: input, sizes: chunkSizes(chunks)}, small)
		if err != nil {
			t.Fatal(err)
		}
		if rawOf(limited) != string(input) {
			t.Fatalf("limit %d: wrote %q, read %q", small, rawOf(limited), input)
		}
	})
}

// blockViews returns the client view of each event that is a block: every
// event but one holding only a prefix at the end of the stream.
func blockViews(events []snap) []snap {
	var out []snap
	for _, e := range events {
		if !e.Complete && len(e.Lines) == 0 {
			continue
		}
		e.Raw, e.Lines = "", nil
		out = append(out, e)
	}
	return out
}

// edits are the field changes FuzzMutate applies, each with what the client
// should then see, given the view of the unchanged stream.
var edits = []struct {
	name   string
	edit   func(e *Event, arg []byte)
	expect func(events []snap, arg []byte, changed bool) view
}{
	{"strip retry",
		func(e *Event, _ []byte) { e.RemoveField("retry") },
		func(events []snap, _ []byte, _ bool) view {
			for i := range events {
				events[i].HasRetry = false
			}
			return clientView(events)
		}},
	{"strip id",
		func(e *Event, _ []byte) { e.RemoveField("id") },
		func(events []snap, _ []byte, _ bool) view {
			for i := range events {
				events[i].HasID = false
			}
			return clientView(events)
		}},
	{"set retry",
		func(e *Event, arg []byte) { e.SetField("retry", digits(arg)) },
		func(events []snap, arg []byte, changed bool) view {
			ms, _ := parseRetry(digits(arg))
			for i := range events {
				if events[i].Complete || len(events[i].Lines) > 0 {
					events[i].HasRetry, events[i].Retry = true, ms
				}
			}
			return clientView(events)
		}},
	{"set data",
		func(e *Event, arg []byte) { e.SetField("data", arg) },
		func(events []snap, arg []byte, _ bool) view {
			data := strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(string(arg))
			for i := range events {
				events[i].Data, events[i].Dispatched = data, events[i].Complete
			}
			return clientView(events)
		}},
}

// digits makes a retry value out of fuzz bytes: always ASCII digits.
func digits(b []byte) []byte {
	d := []byte{'0'}
	for _, c := range b {
		d = append(d, '0'+c%10)
	}
	return d
}

func FuzzMutate(f *testing.F) {
	f.Fuzz(func(t *testing.T, input, chunks []byte, op uint8, arg []byte) {
		ed := edits[int(op)%len(edits)]
		before, err := readAll(t, bytes.NewReader(input), 0)
		if err != nil {
			t.Fatal(err)
		}
		r := NewReader(&chunkReader{data: input, sizes: chunkSizes(chunks)}, 0)
		var out []byte
		var events []snap
		changed := false
		eachEvent(t, r, func(e *Event) {
			events = append(events, snapshot(e))
			ed.edit(e, arg)
			changed = changed || e.Modified()
			out = e.AppendTo(out)
		})
		want := ed.expect(events, arg, changed)
		if got := refParse(out); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: wrote %q, read by a client as %+v, want %+v", ed.name, out, got, want)
		}
		if got := clientView(before); !reflect.DeepEqual(got, refParse(input)) {
			t.Fatalf("input read as %+v, reference %+v", got, refParse(input))
		}
	})
}

// errSourceBroke is what FuzzReader's source fails with, when told to.
var errSourceBroke = errors.New("source broke")

// breakingReader is a chunkReader that, when broke is set, fails with
// errSourceBroke instead of io.EOF once its data is out.
type breakingReader struct {
	chunkReader
	broke bool
}

func (b *breakingReader) Read(p []byte) (int, error) {
	n, err := b.chunkReader.Read(p)
	if err == io.EOF && b.broke {
		err = errSourceBroke
	}
	return n, err
}

// waitingReader is a breakingReader that is a Waiter: the Reader is to
// wait there holding no buffer.
type waitingReader struct {
	breakingReader
	r     *Reader
	t     *testing.T
	waits int
}

func (w *waitingReader) WaitRead() error {
	if w.r.buf != nil {
		w.t.Fatalf("waited holding a buffer of %d bytes", len(w.r.buf))
	}
	w.waits++
	return nil
}

// FuzzReader feeds the Reader any bytes, in reads that break anywhere,
// under a small block limit, from a source that may end cleanly or fail,
// and that may be a Waiter (the high bit of limit).
// For every input: no panic; the Raw of the events, in order, is the input
// exactly; the buffer never grows past the limit plus one read; a parsed
// block never exceeds the limit, and once the stream goes unparsed it stays
// so; each event makes progress; the source's error comes back as it is,
// after every byte, and again on the next call.
func FuzzReader(f *testing.F) {
	f.Fuzz(func(t *testing.T, input, chunks []byte, limit uint16, broke bool) {
		maxBlock := 16 + int(limit)%2048
		src := &breakingReader{chunkReader{data: input, sizes: chunkSizes(chunks)}, broke}
		r := NewReader(src, maxBlock)
		var waiter *waitingReader
		if limit&0x8000 != 0 {
			waiter = &waitingReader{breakingReader: *src, r: r, t: t}
			r.Reset(waiter)
		}
		var out []byte
		unparsed := false
		for {
			e, err := r.Next()
			if c := cap(r.buf); c > maxBlock+minRead {
				t.Fatalf("buffer of %d bytes under a limit of %d", c, maxBlock)
			}
			if err != nil {
				want := io.EOF
				if broke {
					want = errSourceBroke
				}
				if err != want {
					t.Fatalf("stream ended with %v, want %v", err, want)
				}
				if _, again := r.Next(); again != err {
					t.Fatalf("error %v, then %v: not sticky", err, again)
				}
				break
			}
			if len(e.Raw) == 0 {
				t.Fatal("an event with no bytes: no progress")
			}
			if unparsed && !e.Unparsed {
				t.Fatalf("a parsed event %q after the stream went unparsed", e.Raw)
			}
			unparsed = e.Unparsed
			if !e.Unparsed && len(e.Raw) > maxBlock {
				t.Fatalf("a parsed block of %d bytes under a limit of %d", len(e.Raw), maxBlock)
			}
			if len(e.Lines) > len(e.Raw) {
				t.Fatalf("%d lines in %d bytes", len(e.Lines), len(e.Raw))
			}
			out = append(out, e.Raw...)
			if len(out) > len(input) {
				t.Fatalf("%d bytes out of %d in", len(out), len(input))
			}
		}
		if !bytes.Equal(out, input) {
			t.Fatalf("events hold %q, the stream was %q", out, input)
		}
		if waiter != nil && waiter.waits == 0 {
			t.Fatal("a Waiter was never waited on")
		}
	})
}
