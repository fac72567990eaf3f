package sse

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

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
