// The scanner as it was before its skips were made faster (commit
// c757aee), names prefixed with ref: FuzzScan checks that Scan, ScanBatch,
// Lookup and ProtocolVersion still give exactly what it gives, on valid
// and malformed input alike.

package jsonrpc

import (
	"encoding/binary"
	"math/bits"

	"github.com/frayproxy/fray/proxy/mcp"
)

type refMember struct {
	Key      []byte
	KeyFlags uint8
	Value    []byte

	ValueFlags uint8
}

type refMembers struct {
	data  []byte
	i     int
	depth int

	end  int
	ok   bool
	done bool
}

func refOpenObject(data []byte, i, depth int) refMembers {
	var it refMembers
	it.open(data, i, depth)
	return it
}

func (it *refMembers) open(data []byte, i, depth int) {
	*it = refMembers{data: data, depth: depth}
	if depth > maxDepth {
		it.done = true
		return
	}
	it.i = refSkipSpace(data, i+1)
	if it.i < len(data) && data[it.i] == '}' {
		it.done, it.ok, it.end = true, true, it.i+1
	}
}

func (it *refMembers) next(m *refMember) (more bool) {
	if it.done {
		return false
	}
	it.done = true
	m.ValueFlags = 0
	data, i := it.data, it.i
	if i >= len(data) || data[i] != '"' {
		return false
	}
	end, flags, ok := refSkipString(data, i)
	if !ok {
		return false
	}
	m.Key, m.KeyFlags = data[i+1:end-1], flags
	i = refSkipSpace(data, end)
	if i >= len(data) || data[i] != ':' {
		return false
	}
	i = refSkipSpace(data, i+1)
	if i >= len(data) {
		return false
	}
	start := i
	switch data[i] {
	case '{', '[':
		i, ok = refSkipComposite(data, i, it.depth+1)
	case '"':
		i, m.ValueFlags, ok = refSkipString(data, i)
	default:
		i, ok = refSkipScalar(data, i)
	}
	if !ok {
		return false
	}
	m.Value = data[start:i]
	i = refSkipSpace(data, i)
	if i >= len(data) {
		return false
	}
	switch data[i] {
	case ',':
		it.i, it.done = refSkipSpace(data, i+1), false
	case '}':
		it.ok, it.end = true, i+1
	default:
		return false
	}
	return true
}

func refLookup(obj []byte, key string) []byte {
	i := refSkipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil
	}
	it := refOpenObject(obj, i, 1)
	var found []byte
	var m refMember
	for it.next(&m) {
		if equalString(m.Key, m.KeyFlags, key) {
			found = m.Value
		}
	}
	if !it.ok || refSkipSpace(obj, it.end) != len(obj) {
		return nil
	}
	return found
}

func refScan(data []byte) Message {
	var m Message
	refScanInto(data, &m)
	return m
}

func refScanBatch(data []byte, fn func(Message) bool) {
	var m Message
	if !refScanInto(data, &m) {
		return
	}
	if !m.Batch {
		fn(m)
		return
	}
	for i := refSkipSpace(data, 0) + 1; ; {
		i = refSkipSpace(data, i)
		if data[i] == ']' {
			return
		}
		var e Message
		end, _ := refScanElement(data, i, 2, &e)
		if !fn(e) {
			return
		}
		i = refSkipSpace(data, end)
		if data[i] == ',' {
			i++
		}
	}
}

func refScanInto(data []byte, m *Message) bool {
	i := refSkipSpace(data, 0)
	if i >= len(data) {
		return false
	}
	var end int
	var ok bool
	switch data[i] {
	case '{':
		end, ok = refScanObject(data, i, 1, m)
	case '[':
		end, ok = refScanArray(data, i, m)
	default:
		if end, ok = refSkipScalar(data, i); ok {
			m.Raw = data[i:end]
		}
	}
	if !ok || refSkipSpace(data, end) != len(data) {
		*m = Message{}
		return false
	}
	return true
}

func refScanArray(data []byte, i int, m *Message) (end int, ok bool) {
	i = refSkipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		m.Batch = true
		return i + 1, true
	}
	n := 0
	for {
		if i >= len(data) {
			return 0, false
		}
		if n == 0 {
			i, ok = refScanElement(data, i, 2, m)
		} else {
			i, ok = refSkipValue(data, i, 2)
		}
		if !ok {
			return 0, false
		}
		n++
		i = refSkipSpace(data, i)
		if i >= len(data) {
			return 0, false
		}
		switch data[i] {
		case ',':
			i = refSkipSpace(data, i+1)
		case ']':
			m.Batch, m.Count = true, n
			return i + 1, true
		default:
			return 0, false
		}
	}
}

func refScanElement(data []byte, i, depth int, m *Message) (int, bool) {
	if data[i] == '{' {
		return refScanObject(data, i, depth, m)
	}
	end, ok := refSkipValue(data, i, depth)
	if !ok {
		return 0, false
	}
	m.Raw = data[i:end]
	return end, true
}

func refScanObject(data []byte, i, depth int, m *Message) (end int, ok bool) {
	start, hasMethod := i, false
	if depth > maxDepth {
		return 0, false
	}
	if i = refSkipSpace(data, i+1); i < len(data) && data[i] == '}' {
		i++
		goto done
	}
	for {
		if i >= len(data) || data[i] != '"' {
			break
		}
		k, after := refKnownKey(data, i)
		if after == 0 {
			kend, kflags, ok := refSkipString(data, i)
			if !ok {
				break
			}
			k = refWhichKey(data[i+1:kend-1], kflags)
			if i = kend; i >= len(data) || data[i] != ':' {
				if i = refSkipSpace(data, i); i >= len(data) || data[i] != ':' {
					break
				}
			}
			after = i + 1
		}
		if i = refSkipSpace(data, after); i >= len(data) {
			break
		}
		from := i
		var vflags uint8
		v20 := false
		switch data[i] {
		case '"':
			if k == keyVersion && refIsVersion20(data, i) {
				i, ok, v20 = i+5, true, true
				break
			}
			i, vflags, ok = refSkipString(data, i)
		case '{', '[':
			i, ok = refSkipComposite(data, i, depth+1)
		default:
			i, ok = refSkipScalar(data, i)
		}
		if !ok {
			break
		}
		v := data[from:i]
		switch k {
		case keyVersion:
			m.Version = v20 || v[0] == '"' && equalString(v[1:len(v)-1], vflags, "2.0")
		case keyMethod:
			hasMethod, m.Method, m.MethodEscaped = true, nil, false
			if v[0] == '"' {
				m.Method, m.MethodEscaped = v[1:len(v)-1], vflags != 0
			}
		case keyID:
			m.ID = v
		case keyParams:
			m.Params = v
		case keyResult:
			m.Result = v
		case keyError:
			m.Error = v
		}
		if i = refSkipSpace(data, i); i >= len(data) {
			break
		}
		if data[i] == ',' {
			i = refSkipSpace(data, i+1)
			continue
		}
		if data[i] == '}' {
			i++
			goto done
		}
		break
	}
	*m = Message{}
	return 0, false
done:
	m.Raw, m.Count = data[start:i], 1
	m.Kind = refClassify(m, hasMethod)
	return i, true
}

func refClassify(m *Message, hasMethod bool) mcp.RPCKind {
	switch {
	case m.ID != nil && !refValidID(m.ID):
		return mcp.RPCNone
	case hasMethod:
		switch {
		case m.Method == nil:
			return mcp.RPCNone
		case m.ID != nil:
			return mcp.RPCRequest
		}
		return mcp.RPCNotification
	case m.ID == nil:
		return mcp.RPCNone
	case m.Error != nil:
		return mcp.RPCError
	case m.Result != nil:
		return mcp.RPCResponse
	}
	return mcp.RPCNone
}

func refValidID(id []byte) bool {
	c := id[0]
	return c == '"' || c == '-' || isDigit(c) || c == 'n'
}

var refPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func refSkipSpace(data []byte, i int) int {
	if i < len(data) && data[i] > ' ' {
		return i
	}
	for i < len(data) && isSpace(data[i]) {
		i++
	}
	return i
}

func refSkipString(data []byte, i int) (end int, flags uint8, ok bool) {
	i++
	for {

		for i+8 <= len(data) {
			if m := refSpecial(binary.LittleEndian.Uint64(data[i:])); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				goto look
			}
			i += 8
		}
		for i < len(data) && refPlain[data[i]] {
			i++
		}
		if i >= len(data) {
			return 0, 0, false
		}
	look:
		switch c := data[i]; {
		case c == '"':
			return i + 1, flags, true
		case c == '\\':
			flags |= strEscaped
			n := refEscapeLen(data, i)
			if n == 0 {
				return 0, 0, false
			}
			i += n
		case c < 0x20:
			return 0, 0, false
		default:
			flags |= strNonASCII
			i++
		}
	}
}

func refEscapeLen(data []byte, i int) int {
	if i+1 >= len(data) {
		return 0
	}
	switch data[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if i+6 > len(data) {
			return 0
		}
		for _, c := range data[i+2 : i+6] {
			if !isHex(c) {
				return 0
			}
		}
		return 6
	}
	return 0
}

func refSkipNumber(data []byte, i int) (int, bool) {
	if data[i] == '-' {
		i++
	}
	switch {
	case i >= len(data):
		return 0, false
	case data[i] == '0':
		i++
	case isDigit(data[i]):
		i = refSkipDigits(data, i)
	default:
		return 0, false
	}
	if i < len(data) && data[i] == '.' {
		j := refSkipDigits(data, i+1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		j := refSkipDigits(data, i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}

func refSkipDigits(data []byte, i int) int {
	for i < len(data) && isDigit(data[i]) {
		i++
	}
	return i
}

func refSkipLiteral(data []byte, i int, lit string) (int, bool) {
	if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

func refSkipScalar(data []byte, i int) (int, bool) {
	switch c := data[i]; {
	case c == '"':
		end, _, ok := refSkipString(data, i)
		return end, ok
	case c == '-' || isDigit(c):
		return refSkipNumber(data, i)
	case c == 't':
		return refSkipLiteral(data, i, "true")
	case c == 'f':
		return refSkipLiteral(data, i, "false")
	case c == 'n':
		return refSkipLiteral(data, i, "null")
	}
	return 0, false
}

func refSkipValue(data []byte, i, depth int) (int, bool) {
	if c := data[i]; c == '{' || c == '[' {
		return refSkipComposite(data, i, depth)
	}
	return refSkipScalar(data, i)
}

type refKinds struct {
	low  uint64
	high []uint64
	n    int
}

func (k *refKinds) push(object bool) {
	var bit uint64
	if object {
		bit = 1
	}
	if k.n < 64 {
		k.low = k.low&^(1<<k.n) | bit<<k.n
	} else {
		w, b := (k.n-64)/64, uint(k.n%64)
		if w == len(k.high) {
			k.high = append(k.high, 0)
		}
		k.high[w] = k.high[w]&^(1<<b) | bit<<b
	}
	k.n++
}

func (k *refKinds) pop() { k.n-- }

func (k *refKinds) object() bool {
	t := k.n - 1
	if t < 64 {
		return k.low>>t&1 == 1
	}
	return k.high[(t-64)/64]>>(t%64)&1 == 1
}

func refSkipDeep(data []byte, i, depth int) (int, bool) {
	if depth > maxDepth {
		return 0, false
	}
	var st refKinds
	st.push(data[i] == '{')
	i++
	state := stOpen
	for {
		i = refSkipSpace(data, i)
		if i >= len(data) {
			return 0, false
		}
		c := data[i]
		switch state {
		case stOpen, stEntry:
			if state == stOpen && c == refCloser(st.object()) {
				i, state = i+1, stNext
				if st.pop(); st.n == 0 {
					return i, true
				}
				continue
			}
			if st.object() {
				var ok bool
				if i, ok = refSkipKey(data, i); !ok {
					return 0, false
				}
			}
			state = stValue
		case stValue:
			if c == '{' || c == '[' {
				if depth+st.n > maxDepth {
					return 0, false
				}
				st.push(c == '{')
				i, state = i+1, stOpen
				continue
			}
			var ok bool
			if i, ok = refSkipScalar(data, i); !ok {
				return 0, false
			}
			state = stNext
		case stNext:
			switch c {
			case ',':
				i, state = i+1, stEntry
			case refCloser(st.object()):
				i++
				if st.pop(); st.n == 0 {
					return i, true
				}
			default:
				return 0, false
			}
		}
	}
}

func refCloser(object bool) byte {
	if object {
		return '}'
	}
	return ']'
}

func refSkipKey(data []byte, i int) (int, bool) {
	if data[i] != '"' {
		return 0, false
	}
	end, _, ok := refSkipString(data, i)
	if !ok {
		return 0, false
	}
	i = refSkipSpace(data, end)
	if i >= len(data) || data[i] != ':' {
		return 0, false
	}
	return i + 1, true
}

const refFastDepth = 32

func refSkipComposite(data []byte, i, depth int) (int, bool) {
	return refSkipNested(data, i, depth, refFastDepth)
}

func refSkipNested(data []byte, i, depth, left int) (int, bool) {
	if left == 0 {
		return refSkipDeep(data, i, depth)
	}
	if depth > maxDepth {
		return 0, false
	}
	object := data[i] == '{'
	close := refCloser(object)
	i = refSkipSpace(data, i+1)
	if i < len(data) && data[i] == close {
		return i + 1, true
	}
	for {
		if i >= len(data) {
			return 0, false
		}
		var ok bool
		if object {
			if i, ok = refSkipKey(data, i); !ok {
				return 0, false
			}
			if i = refSkipSpace(data, i); i >= len(data) {
				return 0, false
			}
		}
		switch c := data[i]; {
		case c == '{' || c == '[':
			i, ok = refSkipNested(data, i, depth+1, left-1)
		case c == '"':
			i, _, ok = refSkipString(data, i)
		case c == '-' || isDigit(c):
			i, ok = refSkipNumber(data, i)
		default:
			i, ok = refSkipScalar(data, i)
		}
		if !ok {
			return 0, false
		}
		if i = refSkipSpace(data, i); i >= len(data) {
			return 0, false
		}
		switch data[i] {
		case ',':
			i = refSkipSpace(data, i+1)
		case close:
			return i + 1, true
		default:
			return 0, false
		}
	}
}

func refWhichKey(name []byte, flags uint8) int {
	if flags == 0 {
		switch string(name) {
		case "jsonrpc":
			return keyVersion
		case "method":
			return keyMethod
		case "id":
			return keyID
		case "params":
			return keyParams
		case "result":
			return keyResult
		case "error":
			return keyError
		}
		return keyOther
	}
	for k := keyVersion; k < len(keyNames); k++ {
		if equalString(name, flags, keyNames[k]) {
			return k
		}
	}
	return keyOther
}

func refKnownKey(data []byte, i int) (key, after int) {
	if len(data)-i < 10 {
		return keyOther, 0
	}
	w := binary.LittleEndian.Uint64(data[i:])
	switch {
	case w == wordVersion && data[i+8] == '"' && data[i+9] == ':':
		return keyVersion, i + 10
	case w == wordMethod && data[i+8] == ':':
		return keyMethod, i + 9
	case w == wordParams && data[i+8] == ':':
		return keyParams, i + 9
	case w == wordResult && data[i+8] == ':':
		return keyResult, i + 9
	case w == wordError:
		return keyError, i + 8
	case uint32(w) == halfID && data[i+4] == ':':
		return keyID, i + 5
	}
	return keyOther, 0
}

func refIsVersion20(data []byte, i int) bool {
	return len(data)-i >= 5 && binary.LittleEndian.Uint32(data[i:]) == half20 && data[i+4] == '"'
}

func refSpecial(w uint64) uint64 {
	q := w ^ '"'*ones
	b := w ^ '\\'*ones
	return ((w - 0x20*ones) | (q - ones) | (b - ones) | w) & highs
}

func refSkipPlain(data []byte, i int) int {
	for i+8 <= len(data) {
		if m := refSpecial(binary.LittleEndian.Uint64(data[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
		i += 8
	}
	return i
}

func refProtocolVersion(msg []byte) (string, bool) {
	m := refScan(msg)
	if m.Kind != mcp.RPCResponse || m.Batch {
		return "", false
	}
	v := refLookup(m.Result, "protocolVersion")
	if len(v) == 0 || v[0] != '"' {
		return "", false
	}
	_, flags, _ := refSkipString(v, 0)
	return string(appendString(nil, v[1:len(v)-1], flags)), true
}
