package refpeer

import (
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// StatelessProtocolVersion is the revision without sessions or resumption
// (SEP-2575, SEP-2567), which the Go SDK serves only from a stateless
// handler.
const StatelessProtocolVersion = "2026-07-28"

// NewStatelessHandler returns a Streamable HTTP handler serving
// NewServer(opts) with StreamableHTTPOptions.Stateless set, as the Go SDK
// serves revision 2026-07-28: every request is handled on its own, with no
// session, no event store and no SSE ids. A 2026-07-28 client gets the
// stateless revision (server/discover, the per-request _meta); a client that
// initializes at 2025-11-25 is served too, still without a session, so its
// streams cannot be resumed. The tool's CloseSSEStream is then a no-op and
// slow-count simply runs to its end. It serves every path; mount it where
// the endpoint should be (e.g. /mcp).
func NewStatelessHandler(opts ServerOptions) *mcp.StreamableHTTPHandler {
	server := NewServer(opts)
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{
		Stateless: true,
		Logger:    opts.Logger,
	})
}
