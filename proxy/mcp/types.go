package mcp

// StreamType says what kind of exchange a request is, and so what kind of
// SSE stream (if any) its response is.
type StreamType uint8

// The stream types, as profiles and traces name them.
const (
	// StreamAny matches every stream type in a selector; it never
	// describes a real exchange.
	StreamAny StreamType = iota
	// StreamPost is a POST of JSON-RPC messages and the SSE stream (if
	// any) the server answers it with.
	StreamPost
	// StreamGet is a GET that opens the standalone Streamable HTTP stream.
	StreamGet
	// StreamResume is a GET that carries Last-Event-ID to resume a stream.
	StreamResume
	// StreamLegacy is the GET stream of the 2024-11-05 HTTP+SSE transport,
	// and the POSTs to its message endpoint.
	StreamLegacy
	// StreamOther is anything else: a DELETE, a GET of a path that is not
	// an MCP endpoint (OAuth discovery, a health check), a POST that holds
	// no JSON-RPC.
	StreamOther
)

var streamTypeNames = [...]string{"any", "post", "get", "resume", "legacy", "other"}

// String returns the name of t as profiles and traces write it.
func (t StreamType) String() string { return nameOf(streamTypeNames[:], t) }

// ParseStreamType is the inverse of StreamType.String.
func ParseStreamType(s string) (StreamType, bool) {
	return parseName[StreamType](streamTypeNames[:], s)
}

// StreamTypeNames lists every stream type's name, StreamAny's first.
func StreamTypeNames() []string { return append([]string(nil), streamTypeNames[:]...) }

// RPCKind is the JSON-RPC 2.0 kind of a message.
type RPCKind uint8

// The JSON-RPC kinds, as profiles and traces name them.
const (
	// RPCNone means the payload is not (or not known to be) JSON-RPC.
	RPCNone RPCKind = iota
	RPCRequest
	RPCNotification
	RPCResponse
	// RPCError is a response that carries an error member.
	RPCError
)

var rpcKindNames = [...]string{"none", "request", "notification", "response", "error"}

// String returns the name of k as profiles and traces write it.
func (k RPCKind) String() string { return nameOf(rpcKindNames[:], k) }

// ParseRPCKind is the inverse of RPCKind.String.
func ParseRPCKind(s string) (RPCKind, bool) { return parseName[RPCKind](rpcKindNames[:], s) }

// RPCKindNames lists every kind's name, RPCNone's first.
func RPCKindNames() []string { return append([]string(nil), rpcKindNames[:]...) }

// Answers reports whether k is a response to a request (a result or an
// error).
func (k RPCKind) Answers() bool { return k == RPCResponse || k == RPCError }

// nameOf returns the name of v in names, or "unknown" past their end.
func nameOf[T ~uint8](names []string, v T) string {
	if int(v) < len(names) {
		return names[v]
	}
	return "unknown"
}

// parseName returns the value named s in names, or the zero value and
// false when none is.
func parseName[T ~uint8](names []string, s string) (T, bool) {
	for i, n := range names {
		if n == s {
			return T(i), true
		}
	}
	return 0, false
}
