// Package refpeer is a reference pair of MCP peers on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk): a Streamable HTTP server with
// resumability on, and a client that runs one scenario against it.
//
// The scenario exercises SEP-1699 end to end. The client calls the
// slow-count tool with a progress token; the tool sends one progress
// notification per step and, part-way through, closes the request's SSE
// stream with a retry hint. The client must reconnect with a GET carrying
// Last-Event-ID, receive the remaining notifications (replayed from the
// server's event store or sent live) and then the result:
//
//	client --POST tools/call--> server   priming event, progress 1..k, close
//	client --GET Last-Event-ID-> server  progress k+1..n, result
//
// Put a proxy such as fray between the two and the same scenario tests the
// proxy's handling of priming events, retry, Last-Event-ID and replay.
//
// NewStatelessHandler serves the same server as the Go SDK serves revision
// 2026-07-28 (StreamableHTTPOptions.Stateless): no sessions, no event store,
// no resumption; a client asking for 2025-11-25 is served that revision
// without a session. RunClient with ProtocolVersion "2026-07-28" connects
// with server/discover and falls back to initialize when the server does
// not offer that revision.
//
// The tool's wire contract (name "slow-count"; arguments count, closeAfter,
// delayMs; text result "counted to N") matches examples/node, so the Go and
// TypeScript peers can be mixed.
package refpeer
