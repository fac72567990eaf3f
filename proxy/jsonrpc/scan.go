// Package jsonrpc classifies JSON-RPC 2.0 messages on fray's hot path:
// every SSE event's data and every POSTed body goes through Scan.
//
//	bytes -> Scan -> Message{Kind, Method, ID, spans of params/result/error}
//
// Scan walks the top level of one object (or of a batch array) and skips
// nested values without decoding them, so it neither allocates nor copies:
// the byte slices of a Message point into the scanned data. The skipper is
// a full validator: Scan calls a document JSON exactly when encoding/json
// does (same grammar, same nesting limit), and anything else is RPCNone.
// Member names and the method are matched after decoding their escapes, so
// `{"\u006dethod":"x"}` is a notification, as encoding/json would see it.
//
// All functions are safe for concurrent use; they keep no state.
package jsonrpc

import "github.com/frayproxy/fray/proxy/mcp"

// Message is what Scan learns about one JSON-RPC message. The byte slices
// point into the scanned data and are valid as long as it is. The zero
// value is "not JSON-RPC": Kind RPCNone and no fields.
//
// The Kind follows from the members present:
//
//   - a string "method" with an "id": RPCRequest;
//   - a string "method" without an "id": RPCNotification;
//   - no "method", an "id" and an "error": RPCError (even with a "result");
//   - no "method", an "id" and a "result": RPCResponse;
//   - anything else, including a "method" that is not a string or an "id"
//     that is not a string, number or null: RPCNone.
//
// The "jsonrpc" member is not required (Version reports it), so that
// sloppy peers are still classified. The fields are filled from the
// members present whatever the Kind.
type Message struct {
	// Kind is the message's JSON-RPC kind.
	Kind mcp.RPCKind
	// Method is the content of the "method" string, between its quotes
	// and still escaped: nil when there is no string method.
	Method []byte
	// MethodEscaped reports that Method holds escape sequences or bytes
	// beyond ASCII, so its decoded form may differ from its bytes; compare
	// with MethodIs or decode with MethodString.
	MethodEscaped bool
	// ID is the raw JSON of the "id" member (`1`, `"abc"`, `null`): nil
	// when there is none.
	ID []byte
	// Params, Result and Error are the raw JSON of those members, nil when
	// absent.
	Params []byte
	Result []byte
	Error  []byte
	// Version reports a "jsonrpc" member equal to "2.0".
	Version bool
	// Raw is the message's own JSON, without surrounding whitespace: for a
	// batch, the first element.
	Raw []byte
	// Batch reports that the data was a JSON array; the other fields then
	// describe its first element.
	Batch bool
	// Count is the number of elements of a batch, 1 for a single object and
	// 0 for anything else.
	Count int
}

// MethodIs reports whether the decoded method equals name. It does not
// allocate.
func (m *Message) MethodIs(name string) bool {
	return m.Method != nil && equalString(m.Method, m.methodFlags(), name)
}

// MethodString returns the decoded method, "" when there is none. It
// allocates.
func (m *Message) MethodString() string {
	return string(appendString(nil, m.Method, m.methodFlags()))
}

func (m *Message) methodFlags() uint8 {
	if m.MethodEscaped {
		return strEscaped | strNonASCII
	}
	return 0
}

// ProgressToken returns the raw JSON of the progress token the message is
// about: params.progressToken of a notifications/progress, or the token a
// request asks progress for in params._meta.progressToken. It returns nil
// when there is none, and does not allocate.
func (m *Message) ProgressToken() []byte {
	switch m.Kind {
	case mcp.RPCNotification:
		if m.MethodIs("notifications/progress") {
			return Lookup(m.Params, "progressToken")
		}
	case mcp.RPCRequest:
		return Lookup(Lookup(m.Params, "_meta"), "progressToken")
	}
	return nil
}

// Scan classifies data, the JSON of one message or of a batch. Invalid JSON
// gives the zero Message; Scan never reads outside data and never panics.
// It does not allocate.
func Scan(data []byte) Message {
	var m Message
	scan(data, &m)
	return m
}

// ScanBatch calls fn with each message of data in order until fn returns
// false: with each element of a batch (as Scan would describe it alone,
// Count 1 for an object and 0 otherwise), or once with Scan's result for
// anything else. It does not call fn at all when data is not valid JSON,
// which it checks before the first call, so a batch is walked twice.
// ScanBatch does not allocate.
func ScanBatch(data []byte, fn func(Message) bool) {
	var m Message
	if !scan(data, &m) {
		return
	}
	if !m.Batch {
		fn(m)
		return
	}
	for i := skipSpace(data, 0) + 1; ; {
		i = skipSpace(data, i)
		if data[i] == ']' {
			return
		}
		var e Message
		end, _ := scanElement(data, i, 2, &e)
		if !fn(e) {
			return
		}
		i = skipSpace(data, end)
		if data[i] == ',' {
			i++
		}
	}
}

// scan is Scan into m, a zero Message, that also reports whether data is
// valid JSON. (Filling m in place spares copies of a Message, which is
// large, on the per-event path.)
func scan(data []byte, m *Message) bool {
	i := skipSpace(data, 0)
	if i >= len(data) {
		return false
	}
	var end int
	var ok bool
	switch data[i] {
	case '{':
		end, ok = scanObject(data, i, 1, m)
	case '[':
		end, ok = scanBatch(data, i, m)
	default:
		if end, ok = skipScalar(data, i); ok {
			m.Raw = data[i:end]
		}
	}
	if !ok || skipSpace(data, end) != len(data) {
		*m = Message{}
		return false
	}
	return true
}

// scanBatch walks the array at data[i], describing its first element and
// counting the rest, which are only skipped.
func scanBatch(data []byte, i int, m *Message) (end int, ok bool) {
	i = skipSpace(data, i+1)
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
			i, ok = scanElement(data, i, 2, m)
		} else {
			i, ok = skipValue(data, i, 2)
		}
		if !ok {
			return 0, false
		}
		n++
		i = skipSpace(data, i)
		if i >= len(data) {
			return 0, false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case ']':
			m.Batch, m.Count = true, n
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// scanElement describes the batch element at data[i] in m, a zero
// Message; on invalid JSON m is left zero.
func scanElement(data []byte, i, depth int, m *Message) (int, bool) {
	if data[i] == '{' {
		return scanObject(data, i, depth, m)
	}
	end, ok := skipValue(data, i, depth)
	if !ok {
		return 0, false
	}
	m.Raw = data[i:end]
	return end, true
}

// scanObject describes the object that opens at data[i], depth levels deep,
// in m, a zero Message; on invalid JSON m is left zero. It walks the
// members itself, as members.next would, rather than through one: it runs
// once per event, and the walk's state then stays in registers.
func scanObject(data []byte, i, depth int, m *Message) (end int, ok bool) {
	start, hasMethod := i, false
	if depth > maxDepth {
		return 0, false
	}
	if i = skipSpace(data, i+1); i < len(data) && data[i] == '}' {
		i++
		goto done
	}
	if versionFirst(data, i) {
		// As the loop would take it, in two comparisons rather than
		// a member's reading: nearly every message opens so.
		m.Version = true
		i = skipSpace(data, i+16)
	}
	for {
		if i >= len(data) || data[i] != '"' {
			break
		}
		k, after := knownKey(data, i)
		if after == 0 {
			kend, kflags, ok := skipString(data, i)
			if !ok {
				break
			}
			k = whichKey(data[i+1:kend-1], kflags)
			if i = kend; i >= len(data) || data[i] != ':' {
				if i = skipSpace(data, i); i >= len(data) || data[i] != ':' {
					break
				}
			}
			after = i + 1
		}
		if i = skipSpace(data, after); i >= len(data) {
			break
		}
		from := i
		var vflags uint8
		v20 := false // the value is "2.0", written plain
		switch data[i] {
		case '"':
			if k == keyVersion && isVersion20(data, i) {
				i, ok, v20 = i+5, true, true // as every message has it
				break
			}
			i, vflags, ok = skipString(data, i)
		case '{', '[':
			i, ok = skipComposite(data, i, depth+1)
		default:
			i, ok = skipScalar(data, i)
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
		if i = skipSpace(data, i); i >= len(data) {
			break
		}
		if data[i] == ',' {
			i = skipSpace(data, i+1)
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
	m.Kind = classify(m, hasMethod)
	return i, true
}

func classify(m *Message, hasMethod bool) mcp.RPCKind {
	switch {
	case m.ID != nil && !validID(m.ID):
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

// validID reports whether the raw id is a string, a number or null.
func validID(id []byte) bool {
	c := id[0]
	return c == '"' || c == '-' || isDigit(c) || c == 'n'
}
