package sse

import (
	"bytes"
	"io"
)

// A chunk is what one read delivered when it is nothing but whole blocks
// of LF-ended lines, read at a block's edge: bytes a proxy can write on
// as they came and leave to be parsed later, elsewhere, with the same
// result as Next's, block for block (ReadChunk).

// ReadChunk reads the stream's next bytes, as Next would, when nothing
// is buffered and the Reader stands at a block's edge past the start of
// the stream, and returns them as a chunk when they are one: at most
// limit bytes (and at most the block limit), no CR among them, ending in
// an empty line. blocks is how many blocks Next would have returned for
// them (every empty line ends one). The chunk is valid until the next
// call to Next, ReadChunk or Reset, and counts as returned: Next goes on
// after it.
//
// It returns nil when the Reader does not stand at such an edge, without
// reading, or when what it read is no chunk (a block cut by the read, a
// CR, more than limit bytes, an error of the source): those bytes stay
// buffered for Next, which parses them as it would have. Limits above
// 2,048 bytes are lowered to it, so that no block of a chunk has more
// lines than Next parses.
func (r *Reader) ReadChunk(limit int) (chunk []byte, blocks int) {
	if r.src == nil {
		return nil, 0
	}
	if !r.AtEdge() {
		return nil, 0
	}
	r.consume()
	limit = min(limit, r.max, maxChunk)
	r.fill()
	// A read that ends an idle wait takes a few bytes (fillIdle); the rest
	// of what came is read at once, as Next would read it.
	for r.more && r.err == nil && r.end-r.start <= limit && !endsBlock(r.buf[r.start:r.end]) {
		r.fill()
	}
	// fill moved the block's start to the buffer's; nothing was returned.
	r.done = r.start
	b := r.buf[r.start:r.end]
	if r.err != nil || len(b) > limit || !endsBlock(b) {
		return nil, 0
	}
	blocks, ok := chunkBlocks(b)
	if !ok {
		return nil, 0
	}
	// Consumed unscanned: what the line-end searches know is of bytes
	// before the next block.
	r.done, r.line = r.end, r.end
	r.lf, r.cr = seek{at: r.end}, seek{at: r.end}
	return b, blocks
}

// endsBlock reports whether b ends in an empty line of LF.
func endsBlock(b []byte) bool {
	return len(b) >= 2 && b[len(b)-1] == '\n' && b[len(b)-2] == '\n'
}

// maxChunk bounds a chunk: a block of it then has at most maxChunk/2
// lines, fewer than maxLines allows any Reader.
const maxChunk = 2048

// AtEdge reports whether the Reader stands between two blocks with
// nothing buffered and no state carried to the next block: past the start
// of the stream (its BOM check), not after a CR that an LF may complete,
// parsing, with no error. Only there may ReadChunk read a chunk; a caller
// asks first, for the price of a few loads, before it does more.
func (r *Reader) AtEdge() bool {
	return r.begun && r.done == r.end && !r.pendingLF && !r.unparsed && r.err == nil
}

// chunkBlocks counts the blocks of b, which starts at a block's edge and
// ends in an empty line: its empty lines, each an LF right after another
// (or at b's start). It reports false when b holds a CR, whose line ends
// Next reads otherwise. It goes from LF to LF with bytes.IndexByte: every
// chunk of a paced stream passes here.
func chunkBlocks(b []byte) (blocks int, ok bool) {
	if bytes.IndexByte(b, '\r') >= 0 {
		return 0, false
	}
	prev := -1 // b starts a line, as if an LF stood before it
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return blocks, true
		}
		if i+j == prev+1 {
			blocks++
		}
		prev = i + j
		i = prev + 1
	}
}

// ResetChunk makes r read src, bytes of a stream that starts at a block's
// edge past the stream's start (a chunk): no BOM is looked for. r reads
// src straight into a buffer of its own, made once and kept by later
// Resets, rather than waiting as for a network source: src has all its
// bytes already.
func (r *Reader) ResetChunk(src io.Reader) {
	r.Reset(src)
	r.begun = true
	if r.pool != ownBuf {
		r.releaseBuf()
	}
	if r.buf == nil {
		r.buf = make([]byte, minRead)
	}
}
