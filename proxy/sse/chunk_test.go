package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// readWithChunks reads src as a proxy that takes chunks does: a chunk
// when ReadChunk gives one, parsed by a Reader of its own (ResetChunk),
// Next otherwise. It returns what both made of the stream, and how many
// chunks there were.
func readWithChunks(t *testing.T, src io.Reader, maxBlock, limit int) (out []snap, chunks int, err error) {
	t.Helper()
	r := NewReader(src, maxBlock)
	var later Reader
	for {
		if c, blocks := r.ReadChunk(limit); c != nil {
			chunks++
			later.ResetChunk(bytes.NewReader(c))
			events, err := drain(&later)
			if err != nil {
				t.Fatalf("parsing chunk %q: %v", c, err)
			}
			if len(events) != blocks {
				t.Fatalf("chunk %q: ReadChunk counted %d blocks, Next found %d", c, blocks, len(events))
			}
			out = append(out, events...)
			continue
		}
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, chunks, nil
		}
		if err != nil {
			return out, chunks, err
		}
		out = append(out, snapshot(e))
	}
}

// randomStream is an event stream of n blocks, mostly LF-ended, with the
// pieces one read of it delivers: most end at a block's edge, some cut a
// block.
func randomStream(rng *rand.Rand, n int) (stream string, pieces []string) {
	lines := []string{
		`data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`,
		"id: 7", "id:", "event: message", ": keep-alive", "retry: 1500", "data:", "data: a", "data: b",
		"\ufeffdata: bom in a line", "data: \x00", "event",
	}
	var b strings.Builder
	if rng.IntN(8) == 0 {
		b.WriteString("\ufeff")
	}
	edge := 0
	for range n {
		eol := "\n"
		if rng.IntN(12) == 0 {
			eol = []string{"\r\n", "\r"}[rng.IntN(2)]
		}
		for range rng.IntN(4) {
			b.WriteString(lines[rng.IntN(len(lines))])
			b.WriteString(eol)
		}
		if rng.IntN(20) == 0 {
			b.WriteString("data: " + strings.Repeat("x", 3000) + eol)
		}
		b.WriteString(eol)
		if rng.IntN(3) > 0 {
			s := b.String()
			cut := len(s)
			if rng.IntN(6) == 0 {
				cut = edge + rng.IntN(len(s)-edge+1)
			}
			pieces = append(pieces, s[edge:cut])
			edge = cut
		}
	}
	s := b.String()
	return s, append(pieces, s[edge:])
}

// TestReadChunkMatchesNext: a stream read a chunk at a time where it can be,
// each chunk parsed apart, gives the blocks Next gives, byte for byte and
// field for field, whatever the reads and the line ends.
func TestReadChunkMatchesNext(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var chunks, streams int
	for i := range 400 {
		stream, pieces := randomStream(rng, 1+rng.IntN(30))
		want, err := readAll(t, &piecesReader{pieces: slices.Clone(pieces)}, 0)
		if err != nil {
			t.Fatal(err)
		}
		got, n, err := readWithChunks(t, &piecesReader{pieces: slices.Clone(pieces)}, 0, 1024)
		if err != nil {
			t.Fatal(err)
		}
		chunks += n
		if n > 0 {
			streams++
		}
		sameBlocks(t, fmt.Sprintf("stream %d %q: ", i, stream), got, want)
	}
	// The test is worth something only if both ways were taken often.
	if chunks < 1000 || streams < 300 {
		t.Fatalf("only %d chunks in %d of 400 streams", chunks, streams)
	}
}

// FuzzReadChunk: any bytes, in reads that break anywhere, under any block
// limit and chunk limit, read a chunk at a time where ReadChunk gives one
// (each parsed apart) give the blocks Next alone gives, and the same end.
func FuzzReadChunk(f *testing.F) {
	f.Add([]byte("data: a\n\nid: 1\ndata: b\n\n: c\n\n\n"), []byte{9, 14, 5, 1}, uint16(1024))
	f.Add([]byte("\ufeffdata: a\r\n\r\ndata: b\n\n"), []byte{13, 9}, uint16(40))
	f.Fuzz(func(t *testing.T, input, sizes []byte, limit uint16) {
		maxBlock := 16 + int(limit)%2048
		want, wantErr := readAll(t, &chunkReader{data: input, sizes: chunkSizes(sizes)}, maxBlock)
		got, _, gotErr := readWithChunks(t, &chunkReader{data: input, sizes: chunkSizes(sizes)}, maxBlock, int(limit>>4))
		if !errors.Is(gotErr, wantErr) && gotErr != wantErr {
			t.Fatalf("ended with %v, want %v", gotErr, wantErr)
		}
		sameBlocks(t, "", got, want)
	})
}

// TestReadChunkRefuses: what is not a chunk stays for Next, which returns
// it as it would have; at the stream's start, where a BOM may come,
// ReadChunk does not even read.
func TestReadChunkRefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pieces []string
		limit  int
	}{
		{"a block cut by the read", []string{"data: a\n\n", "data: b\n"}, 1024},
		{"a CR", []string{"data: a\n\n", "data: b\r\n\r\n"}, 1024},
		{"past the limit", []string{"data: a\n\n", "data: " + strings.Repeat("b", 40) + "\n\n"}, 32},
		{"an LF that may end a CR", []string{"data: a\r\r", "\ndata: b\n\n"}, 1024},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &piecesReader{pieces: slices.Clone(tc.pieces)}
			r := NewReader(src, 0)
			if c, _ := r.ReadChunk(tc.limit); c != nil || len(src.pieces[0]) == 0 {
				t.Fatalf("at the stream's start: chunk %q, and the first piece read", c)
			}
			if first, err := r.Next(); err != nil || string(first.Raw) != tc.pieces[0] {
				t.Fatalf("first block %q (%v), want %q", first.Raw, err, tc.pieces[0])
			}
			if c, _ := r.ReadChunk(tc.limit); c != nil {
				t.Fatalf("chunk %q, want none", c)
			}
			if e, err := r.Next(); err != nil || string(e.Raw) != tc.pieces[1] {
				t.Fatalf("next block %q (%v), want %q", e.Raw, err, tc.pieces[1])
			}
		})
	}
}

// sameBlocks fails t unless the blocks read with chunks are those Next
// read, field for field; where begins each message.
func sameBlocks(t *testing.T, where string, got, want []snap) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s%d blocks with chunks, %d with Next", where, len(got), len(want))
	}
	for j := range want {
		if !reflect.DeepEqual(got[j], want[j]) {
			t.Fatalf("%sblock %d:\nwith chunks %+v\nwith Next   %+v", where, j, got[j], want[j])
		}
	}
}
