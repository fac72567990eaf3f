package jsonrpc

import (
	"strconv"

	"github.com/frayproxy/fray/proxy/mcp"
)

// This file reads the members 2026-07-28 added to requests and answers:
// the protocol revision each request carries in params._meta, the name
// its Mcp-Name header mirrors, and an error's code. Like Scan, the
// functions that return byte slices point into the message and do not
// allocate.

// MetaProtocolVersion returns the raw JSON string of
// params._meta["io.modelcontextprotocol/protocolVersion"] of a request,
// quotes included, nil when there is none.
func (m *Message) MetaProtocolVersion() []byte {
	if m.Kind != mcp.RPCRequest && m.Kind != mcp.RPCNotification {
		return nil
	}
	return stringValue(Lookup(Lookup(m.Params, "_meta"), mcp.MetaProtocolVersion))
}

// TargetName returns the raw JSON string that a request's Mcp-Name header
// mirrors (params.name of tools/call and prompts/get, params.uri of
// resources/read), quotes included, nil when the method has none or the
// member is not a string.
func (m *Message) TargetName() []byte {
	if m.Kind != mcp.RPCRequest {
		return nil
	}
	var key string
	switch {
	case m.MethodIs("tools/call"), m.MethodIs("prompts/get"):
		key = "name"
	case m.MethodIs("resources/read"):
		key = "uri"
	default:
		return nil
	}
	return stringValue(Lookup(m.Params, key))
}

// ErrorCode returns error.code of an error response, and whether it has
// an integer one.
func (m *Message) ErrorCode() (int, bool) {
	c := Lookup(m.Error, "code")
	if len(c) == 0 {
		return 0, false
	}
	n, err := strconv.Atoi(string(c))
	return n, err == nil
}

// Unquote decodes a raw JSON string (quotes included) as returned by
// MetaProtocolVersion and TargetName; "" for nil. It allocates.
func Unquote(s []byte) string {
	if len(s) < 2 {
		return ""
	}
	_, flags, _ := skipString(s, 0)
	return string(appendString(nil, s[1:len(s)-1], flags))
}

// stringValue returns v when it is a JSON string, nil otherwise.
func stringValue(v []byte) []byte {
	if len(v) < 2 || v[0] != '"' {
		return nil
	}
	return v
}

// ParamsDigest returns a hash of a request's params without their _meta
// member: what stays the same when a client re-issues a request under a
// new id (its _meta may carry a new progress token). Members are hashed
// as sent, in order; 0 means no params object. It does not allocate.
func (m *Message) ParamsDigest() uint64 {
	i := skipSpace(m.Params, 0)
	if i >= len(m.Params) || m.Params[i] != '{' {
		return 0
	}
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	add := func(b []byte) {
		for _, c := range b {
			h = (h ^ uint64(c)) * prime
		}
		h = (h ^ 0xff) * prime
	}
	it := openObject(m.Params, i, 1)
	var mb member
	for it.next(&mb) {
		if equalString(mb.Key, mb.KeyFlags, "_meta") {
			continue
		}
		add(mb.Key)
		add(mb.Value)
	}
	if !it.ok {
		return 0
	}
	return h | 1
}

// TaskID returns the raw JSON string of the task a message is about:
// params.taskId of a request (tasks/get, tasks/update, tasks/cancel), or
// result.taskId (or result.task.taskId) of a response that creates or
// reports a task; nil when there is none.
func (m *Message) TaskID() []byte {
	switch m.Kind {
	case mcp.RPCRequest:
		return stringValue(Lookup(m.Params, "taskId"))
	case mcp.RPCResponse:
		if id := stringValue(Lookup(m.Result, "taskId")); id != nil {
			return id
		}
		return stringValue(Lookup(Lookup(m.Result, "task"), "taskId"))
	}
	return nil
}

// PollIntervalMs returns result.pollIntervalMs (or
// result.task.pollIntervalMs) of a response that reports a task, and
// whether it has a non-negative integer one.
func (m *Message) PollIntervalMs() (int64, bool) {
	if m.Kind != mcp.RPCResponse {
		return 0, false
	}
	v := Lookup(m.Result, "pollIntervalMs")
	if v == nil {
		v = Lookup(Lookup(m.Result, "task"), "pollIntervalMs")
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	return n, err == nil && n >= 0
}
