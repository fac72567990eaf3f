// Package mcpgopeer is a pair of MCP peers on github.com/mark3labs/mcp-go
// v1.2.1, the most used third-party Go implementation: a server and a client,
// each over Streamable HTTP (2025-11-25) or the legacy HTTP+SSE transport
// (2024-11-05).
//
// The server offers slow-count with the wire contract of examples/gosdk and
// examples/node (arguments count and delayMs, one progress notification per
// step, text result "counted to N"), so any client of those examples can call
// it and this client can call theirs. Over Streamable HTTP it is set up as
// the library documents for resumability: an in-memory event store, so every
// message on an SSE stream carries an id and a GET with Last-Event-ID
// replays what was missed. The tool honours its context, as Go code should:
// mcp-go derives that context from the POST's connection.
//
// mcp-go decides each request's era from what it declares, so the same
// handler also serves revision 2026-07-28 (no sessions, no ids, no
// resumption) to a client that asks for it.
//
// The client initializes at 2025-11-25 unless ClientOptions.ProtocolVersion
// asks for 2026-07-28, when it probes with server/discover first and falls
// back to initialize if the server does not answer it; it calls a named
// tool with a progress token, and checks the result and the progress it
// received.
//
//	client --POST tools/call (progressToken)--> server   progress 1..n, result
package mcpgopeer
