package jsonrpc

import "github.com/frayproxy/fray/proxy/mcp"

// ProtocolVersion returns result.protocolVersion of msg, the JSON of an
// initialize response (an SSE event's data or an application/json body),
// and whether msg is a single response (initialize is never batched) that
// carries one as a string. It is meant
// for the rare initialize exchange and allocates the string.
func ProtocolVersion(msg []byte) (string, bool) {
	m := Scan(msg)
	if m.Kind != mcp.RPCResponse || m.Batch {
		return "", false
	}
	v := Lookup(m.Result, "protocolVersion")
	if len(v) == 0 || v[0] != '"' {
		return "", false
	}
	_, flags, _ := skipString(v, 0)
	return string(appendString(nil, v[1:len(v)-1], flags)), true
}
