package mcpgopeer

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/frayproxy/fray/examples/internal/slowcount"
)

// ToolName is the tool the server offers.
const ToolName = "slow-count"

// Defaults for slow-count's arguments.
const (
	DefaultCount = 6
	DefaultDelay = 20 * time.Millisecond
)

// ServerOptions configures NewStreamableHandler. The zero value is usable.
type ServerOptions struct {
	// NoEventStore turns resumability off: the Streamable HTTP server then
	// sends SSE events without ids. The zero value keeps
	// server.NewInMemoryEventStore, as mcp-go documents for resumable
	// streams.
	NoEventStore bool
	// Logger receives mcp-go's log lines. Nil discards them.
	Logger *slog.Logger
}

// NewServer returns an mcp-go server offering slow-count.
func NewServer() *server.MCPServer {
	s := server.NewMCPServer("fray-example-mcp-go", "1.0.0", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool(ToolName,
		mcp.WithDescription("Counts to count with one progress notification per step, delayMs apart."),
		mcp.WithNumber("count", mcp.Description("number of steps (default 6)")),
		mcp.WithNumber("delayMs", mcp.Description("pause after each step in milliseconds (default 20)")),
	), slowCount)
	return s
}

// slowCount counts, sending progress when the caller gave a token. It waits
// on its context between steps, as a Go handler should: when mcp-go cancels
// that context, the call ends with the context's error.
func slowCount(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	count := req.GetInt("count", DefaultCount)
	delay := time.Duration(req.GetInt("delayMs", int(DefaultDelay/time.Millisecond))) * time.Millisecond
	if count < 1 || count > 1000 || delay < 0 || delay > 10*time.Second {
		return mcp.NewToolResultError(fmt.Sprintf("count %d, delayMs %d: want 1..1000 and 0..10000", count, delay.Milliseconds())), nil
	}
	var token mcp.ProgressToken
	if req.Params.Meta != nil {
		token = req.Params.Meta.ProgressToken
	}
	srv := server.ServerFromContext(ctx)
	for i := 1; i <= count; i++ {
		if token != nil {
			err := srv.SendNotificationToClient(ctx, "notifications/progress", map[string]any{
				"progressToken": token, "progress": i, "total": count, "message": fmt.Sprintf("step %d of %d", i, count),
			})
			if err != nil {
				return nil, fmt.Errorf("slow-count: progress %d: %w", i, err)
			}
		}
		if err := slowcount.Pause(ctx, delay); err != nil {
			return nil, fmt.Errorf("slow-count: step %d: %w", i, err)
		}
	}
	return mcp.NewToolResultText(fmt.Sprintf("counted to %d", count)), nil
}

// NewStreamableHandler serves slow-count over Streamable HTTP at /mcp.
func NewStreamableHandler(opts ServerOptions) http.Handler {
	sopts := []server.StreamableHTTPOption{server.WithStreamableHTTPLogger(logger(opts.Logger))}
	if !opts.NoEventStore {
		sopts = append(sopts, server.WithEventStore(server.NewInMemoryEventStore()))
	}
	return server.NewStreamableHTTPServer(NewServer(), sopts...)
}

// NewSSEHandler serves slow-count over the 2024-11-05 HTTP+SSE transport:
// GET /sse opens the stream, whose endpoint event names
// /message?sessionId=... (relative, so a proxy in front keeps the POSTs).
func NewSSEHandler() http.Handler {
	return server.NewSSEServer(NewServer())
}

func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
