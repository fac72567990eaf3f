package refpeer

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/frayproxy/fray/examples/internal/slowcount"
)

// ToolName is the name of the tool the server offers and the client calls.
const ToolName = "slow-count"

// Defaults for the slow-count arguments and the server's retry hint.
const (
	DefaultCount      = 6
	DefaultCloseAfter = 3
	DefaultDelay      = 20 * time.Millisecond
	DefaultRetryAfter = 100 * time.Millisecond
)

// ServerOptions configures NewServer and NewHandler. The zero value is
// usable.
type ServerOptions struct {
	// RetryAfter is sent as the SSE retry field when the tool closes its
	// stream. Zero means DefaultRetryAfter; a negative value sends no retry
	// field, leaving the client to its own backoff.
	RetryAfter time.Duration
	// EventStore keeps events for replay. Nil means a fresh
	// mcp.NewMemoryEventStore(nil) per handler.
	EventStore mcp.EventStore
	// Logger receives the SDK's log lines. Nil discards them.
	Logger *slog.Logger
}

// SlowCountArgs are the slow-count tool's arguments.
type SlowCountArgs struct {
	// Count is how many steps to count; 0 means DefaultCount.
	Count int `json:"count,omitempty" jsonschema:"number of steps, one progress notification each (default 6)"`
	// CloseAfter is the step after which the tool closes its SSE stream.
	// Nil means DefaultCloseAfter; 0 means never.
	CloseAfter *int `json:"closeAfter,omitempty" jsonschema:"close the SSE stream after this step; 0 never (default 3)"`
	// DelayMs is the pause after each step in milliseconds; 0 means
	// DefaultDelay.
	DelayMs int `json:"delayMs,omitempty" jsonschema:"pause after each step in milliseconds (default 20)"`
}

// SlowCountResult is the slow-count tool's structured result.
type SlowCountResult struct {
	// Counted is the number of steps counted.
	Counted int `json:"counted"`
	// StreamClosed reports whether the tool closed its SSE stream.
	StreamClosed bool `json:"streamClosed"`
}

// NewServer returns an MCP server offering the slow-count tool.
func NewServer(opts ServerOptions) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "fray-example-gosdk", Version: "1.0.0"}, &mcp.ServerOptions{Logger: opts.Logger})
	retry := opts.RetryAfter
	switch {
	case retry == 0:
		retry = DefaultRetryAfter
	case retry < 0:
		retry = 0
	}
	mcp.AddTool(s, &mcp.Tool{
		Name:        ToolName,
		Description: "Counts with one progress notification per step; closes the SSE stream after closeAfter steps.",
	}, func(ctx context.Context, req *mcp.CallToolRequest, args SlowCountArgs) (*mcp.CallToolResult, SlowCountResult, error) {
		return slowCount(ctx, req, args, retry)
	})
	return s
}

func slowCount(ctx context.Context, req *mcp.CallToolRequest, args SlowCountArgs, retry time.Duration) (*mcp.CallToolResult, SlowCountResult, error) {
	count, closeAfter, delay := DefaultCount, DefaultCloseAfter, DefaultDelay
	if args.Count > 0 {
		count = args.Count
	}
	if args.CloseAfter != nil {
		closeAfter = *args.CloseAfter
	}
	if args.DelayMs > 0 {
		delay = time.Duration(args.DelayMs) * time.Millisecond
	}
	if count > 1000 || closeAfter < 0 || delay > 10*time.Second {
		return nil, SlowCountResult{}, fmt.Errorf("slow-count: arguments out of range: count=%d closeAfter=%d delayMs=%d", count, closeAfter, args.DelayMs)
	}
	token := req.Params.GetProgressToken()
	var res SlowCountResult
	for i := 1; i <= count; i++ {
		if token != nil {
			err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token,
				Progress:      float64(i),
				Total:         float64(count),
				Message:       fmt.Sprintf("step %d of %d", i, count),
			})
			if err != nil {
				return nil, res, fmt.Errorf("slow-count: progress %d: %w", i, err)
			}
		}
		// CloseSSEStream is nil outside the Streamable HTTP transport and a
		// no-op from 2026-07-28 on; the call then simply runs to the end.
		if i == closeAfter && req.Extra != nil && req.Extra.CloseSSEStream != nil {
			req.Extra.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: retry})
			res.StreamClosed = true
		}
		if err := slowcount.Pause(ctx, delay); err != nil {
			return nil, res, fmt.Errorf("slow-count: step %d: %w", i, err)
		}
	}
	res.Counted = count
	return &mcp.CallToolResult{
		Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("counted to %d", count)}},
	}, res, nil
}

// NewHandler returns a Streamable HTTP handler serving NewServer(opts) with
// sessions and an event store, so streams can be resumed with Last-Event-ID.
// It serves every path; mount it where the endpoint should be (e.g. /mcp).
func NewHandler(opts ServerOptions) *mcp.StreamableHTTPHandler {
	store := opts.EventStore
	if store == nil {
		store = mcp.NewMemoryEventStore(nil)
	}
	server := NewServer(opts)
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{
		EventStore: store,
		Logger:     opts.Logger,
	})
}
