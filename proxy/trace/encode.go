package trace

import (
	"maps"
	"slices"
	"strconv"

	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/mcp"
)

// enc appends one JSON object to a reused buffer, after the lines it may
// already hold. It is hand-written for the format: raw_parts keeps an
// event's message JSON byte for byte as the server sent it, spaces and
// all, which encoding/json would compact; TestEncoderGolden pins every
// byte.
type enc struct {
	b     []byte
	first bool // no member written yet in the current object
	keys  []string
	// head is the last exchangeHead written, for the next observation
	// of the same exchange (most are events of one stream).
	head headKey
	hb   []byte
}

// headKey is what exchangeHead writes.
type headKey struct {
	exchange   uint64
	stream     mcp.StreamType
	session    string
	sessionSeq int
	protocol   string
}

// exchangeHead writes the members every observation of an exchange
// shares, copying them when they are those written last.
func (e *enc) exchangeHead(exchange uint64, stream mcp.StreamType, session string, sessionSeq int, protocol string) {
	k := headKey{exchange, stream, session, sessionSeq, protocol}
	if k == e.head && len(e.hb) > 0 && !e.first {
		e.b = append(e.b, e.hb...)
		return
	}
	start, first := len(e.b), e.first
	e.uint("exchange", exchange)
	e.str("stream", stream.String())
	e.strNonEmpty("session", session)
	e.intNonZero("session_seq", int64(sessionSeq))
	e.strNonEmpty("protocol", protocol)
	if !first {
		e.head, e.hb = k, append(e.hb[:0], e.b[start:]...)
	}
}

func (e *enc) open() {
	e.b = append(e.b, '{')
	e.first = true
}

func (e *enc) close() {
	e.b = append(e.b, '}')
	e.first = false
}

// key writes a member name and the colon.
func (e *enc) key(k string) {
	b := e.b // a local, so that the appends need not store e.b each time
	if !e.first {
		b = append(b, ',')
	}
	e.first = false
	b = append(b, '"')
	b = append(b, k...)
	e.b = append(b, '"', ':')
}

// object opens a nested object under k.
func (e *enc) object(k string) {
	e.key(k)
	e.open()
}

func (e *enc) str(k, v string) {
	e.key(k)
	e.b = appendString(e.b, v)
}

func (e *enc) strNonEmpty(k, v string) {
	if v != "" {
		e.str(k, v)
	}
}

func (e *enc) int(k string, v int64) {
	e.key(k)
	e.b = strconv.AppendInt(e.b, v, 10)
}

func (e *enc) intNonZero(k string, v int64) {
	if v != 0 {
		e.int(k, v)
	}
}

func (e *enc) uint(k string, v uint64) {
	e.key(k)
	e.b = strconv.AppendUint(e.b, v, 10)
}

func (e *enc) boolTrue(k string) {
	e.key(k)
	e.b = append(e.b, "true"...)
}

func (e *enc) flag(k string, v bool) {
	if v {
		e.boolTrue(k)
	}
}

// strings writes a JSON array of strings.
func (e *enc) strings(k string, vs []string) {
	e.key(k)
	e.b = append(e.b, '[')
	for i, v := range vs {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.b = appendString(e.b, v)
	}
	e.b = append(e.b, ']')
}

// header writes a header map with sorted names, each value as red says.
func (e *enc) header(k string, h map[string][]string, red *redactor) {
	e.key(k)
	e.keys = e.keys[:0]
	for name := range h {
		e.keys = append(e.keys, name)
	}
	slices.Sort(e.keys)
	e.b = append(e.b, '{')
	for i, name := range e.keys {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.b = appendString(e.b, name)
		e.b = append(e.b, ':', '[')
		for j, v := range h[name] {
			if j > 0 {
				e.b = append(e.b, ',')
			}
			e.b = appendString(e.b, red.value(name, v))
		}
		e.b = append(e.b, ']')
	}
	e.b = append(e.b, '}')
}

// checks writes a table of check severities, sorted by id; nothing for
// none.
func (e *enc) checks(sev map[string]checks.Severity) {
	if len(sev) == 0 {
		return
	}
	e.key("checks")
	e.open()
	for _, id := range slices.Sorted(maps.Keys(sev)) {
		e.str(id, string(sev[id]))
	}
	e.close()
}
