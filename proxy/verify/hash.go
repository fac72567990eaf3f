package verify

import (
	"bytes"
	"hash/maphash"

	"github.com/frayproxy/fray/proxy/observe"
)

// hashSeed seeds the hashes the verifier compares: event data and ids.
// One seed for the life of the process, so that a hash taken live and one
// taken from a trace read back in the same process agree.
var hashSeed = maphash.MakeSeed()

// idHash hashes an event id for the verifier's id tables.
func idHash(id []byte) uint64 { return maphash.Bytes(hashSeed, id) }

// eventHash hashes the data of an event as the upstream sent it (its data
// lines joined with LF, as a client sees them), so that a replayed event
// can be told from another event that reuses its id. The proxy's reader
// already joined the lines into e.Data, which is hashed whole; but a
// corrupt fault rewrites the data after the reader, and e.Data may then
// share the rewritten bytes, so a corrupted event is hashed from its raw
// block instead. Both ways give the same value for the same data. It
// does not allocate.
func eventHash(e *observe.Event) uint64 {
	if e.Corrupted {
		return dataHash(e.Raw)
	}
	return maphash.Bytes(hashSeed, e.Data)
}

// utf8BOM starts the first block of a stream that has one; a client's
// parser drops it.
var utf8BOM = []byte("\xef\xbb\xbf")

// dataHash hashes the data of the SSE event block raw, as eventHash does
// e.Data: it follows the WHATWG line rules (CR, LF or CRLF ends a line;
// one space after the colon is dropped; a leading BOM is not part of the
// first line) and does not allocate.
func dataHash(raw []byte) uint64 {
	var h maphash.Hash
	h.SetSeed(hashSeed)
	raw = bytes.TrimPrefix(raw, utf8BOM)
	first := true
	for len(raw) > 0 {
		end, next := len(raw), len(raw)
		if i := bytes.IndexAny(raw, "\r\n"); i >= 0 {
			end, next = i, i+1
			if raw[i] == '\r' && i+1 < len(raw) && raw[i+1] == '\n' {
				next = i + 2
			}
		}
		line := raw[:end]
		raw = raw[next:]
		if len(line) < 4 || string(line[:4]) != "data" || len(line) > 4 && line[4] != ':' {
			continue
		}
		val := line[min(len(line), 5):]
		if len(val) > 0 && val[0] == ' ' {
			val = val[1:]
		}
		if !first {
			_ = h.WriteByte('\n')
		}
		first = false
		_, _ = h.Write(val)
	}
	return h.Sum64()
}
