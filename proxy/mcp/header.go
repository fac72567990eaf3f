package mcp

// The header fields of the MCP transports that fray reads, in canonical
// form (as net/http keys them).
const (
	// HeaderSession carries the session id of Streamable HTTP.
	HeaderSession = "Mcp-Session-Id"
	// HeaderProtocol carries the negotiated protocol revision.
	HeaderProtocol = "Mcp-Protocol-Version"
	// HeaderLastEventID carries the id a client resumes a stream from.
	HeaderLastEventID = "Last-Event-Id"
	// HeaderMethod and HeaderName route a request from 2026-07-28 on: its
	// JSON-RPC method, and the tool, prompt or resource it names.
	HeaderMethod = "Mcp-Method"
	HeaderName   = "Mcp-Name"
)
