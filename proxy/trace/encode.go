package trace

import (
	"encoding/base64"
	"maps"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/frayproxy/fray/checks"
	"github.com/frayproxy/fray/mcp"
)

// enc appends one JSON object to a reused buffer. It is hand-written so
// that tracing an event costs no allocation and no reflection: the writer
// runs on the proxy's per-event path.
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

// jsonSafe holds the bytes a JSON string carries as they are: ASCII but
// the controls, the quote and the backslash.
var jsonSafe = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

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

// bytes writes b as a JSON string under k when it is valid UTF-8, and as
// standard base64 under k+"_b64" otherwise, so that no byte is lost.
func (e *enc) bytes(k string, b []byte) {
	if utf8.Valid(b) {
		e.key(k)
		e.b = appendString(e.b, b)
		return
	}
	if !e.first {
		e.b = append(e.b, ',')
	}
	e.first = false
	e.b = append(e.b, '"')
	e.b = append(e.b, k...)
	e.b = append(e.b, `_b64":"`...)
	e.b = base64.StdEncoding.AppendEncode(e.b, b)
	e.b = append(e.b, '"')
}

func (e *enc) bytesNonEmpty(k string, b []byte) {
	if len(b) > 0 {
		e.bytes(k, b)
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

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD,
// as encoding/json does; callers that must keep every byte use enc.bytes.
// Unlike encoding/json, <, > and & are not escaped: a trace is not HTML.
func appendString[S string | []byte](b []byte, s S) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		// The common case, a run of bytes written as they are, in one
		// tight loop.
		for i < len(s) && jsonSafe[s[i]] {
			i++
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		size := runeLen(s, i)
		if size == 0 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		// U+2028 and U+2029 are valid JSON but end a line in a JavaScript
		// source; the timeline embeds trace text in a script.
		if size == 3 && c == 0xe2 && s[i+1] == 0x80 && (s[i+2] == 0xa8 || s[i+2] == 0xa9) {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[s[i+2]&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// runeLen returns the length of the valid UTF-8 sequence that starts at
// s[i] (a byte >= 0x80), or 0 when none does.
func runeLen[S string | []byte](s S, i int) int {
	cont := func(j int, lo, hi byte) bool { return j < len(s) && s[j] >= lo && s[j] <= hi }
	c := s[i]
	switch {
	case c < 0xc2:
		return 0
	case c < 0xe0:
		if cont(i+1, 0x80, 0xbf) {
			return 2
		}
	case c < 0xf0:
		lo, hi := byte(0x80), byte(0xbf)
		if c == 0xe0 {
			lo = 0xa0
		} else if c == 0xed {
			hi = 0x9f
		}
		if cont(i+1, lo, hi) && cont(i+2, 0x80, 0xbf) {
			return 3
		}
	case c < 0xf5:
		lo, hi := byte(0x80), byte(0xbf)
		if c == 0xf0 {
			lo = 0x90
		} else if c == 0xf4 {
			hi = 0x8f
		}
		if cont(i+1, lo, hi) && cont(i+2, 0x80, 0xbf) && cont(i+3, 0x80, 0xbf) {
			return 4
		}
	}
	return 0
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
