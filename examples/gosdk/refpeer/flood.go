package refpeer

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FloodToolName is the name of the tool NewFloodHandler's server offers:
// it sends Count progress notifications as fast as the SDK writes them,
// then answers.
const FloodToolName = "flood"

// MaxFlood bounds the flood tool's count.
const MaxFlood = 10_000_000

// FloodArgs are the flood tool's arguments.
type FloodArgs struct {
	// Count is how many progress notifications to send, 1 to MaxFlood.
	Count int `json:"count" jsonschema:"number of progress notifications to send as fast as they go"`
}

// NewFloodHandler returns a Streamable HTTP handler serving an MCP server
// that offers only the flood tool: a load for measuring what sits between
// an SDK server and an SDK client. It keeps no event store: a flood is not
// resumed. It serves every path.
func NewFloodHandler() *mcp.StreamableHTTPHandler {
	s := mcp.NewServer(&mcp.Implementation{Name: "fray-example-gosdk-flood", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{
		Name:        FloodToolName,
		Description: "Sends count progress notifications as fast as they go, then answers.",
	}, flood)
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
}

func flood(ctx context.Context, req *mcp.CallToolRequest, args FloodArgs) (*mcp.CallToolResult, any, error) {
	if args.Count < 1 || args.Count > MaxFlood {
		return nil, nil, fmt.Errorf("flood: count=%d: want 1 to %d", args.Count, MaxFlood)
	}
	token := req.Params.GetProgressToken()
	if token == nil {
		return nil, nil, errors.New("flood: no progress token: call it with one")
	}
	p := &mcp.ProgressNotificationParams{ProgressToken: token, Total: float64(args.Count)}
	for i := 1; i <= args.Count; i++ {
		p.Progress = float64(i)
		if err := req.Session.NotifyProgress(ctx, p); err != nil {
			return nil, nil, fmt.Errorf("flood: progress %d: %w", i, err)
		}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("sent %d", args.Count)}}}, nil, nil
}

// FloodClient is an SDK client session connected to a flood server. Its
// Call is not safe for concurrent use.
type FloodClient struct {
	session  *mcp.ClientSession
	received atomic.Int64
	target   atomic.Int64
	reached  chan struct{}
}

// DialFlood connects an SDK client to the flood server at endpoint, with
// httpClient carrying its requests (nil: http.DefaultClient).
func DialFlood(ctx context.Context, endpoint string, httpClient *http.Client) (*FloodClient, error) {
	fc := &FloodClient{reached: make(chan struct{}, 1)}
	client := mcp.NewClient(&mcp.Implementation{Name: "fray-example-gosdk-flood-client", Version: "1.0.0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
			if fc.received.Add(1) == fc.target.Load() {
				fc.reached <- struct{}{}
			}
		},
	})
	transport := &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: httpClient, MaxRetries: -1}
	cs, err := client.Connect(ctx, transport, nil)
	if err != nil {
		return nil, fmt.Errorf("refpeer: connecting to %s: %w", endpoint, err)
	}
	fc.session = cs
	return fc, nil
}

// Call asks for n progress notifications and returns once the answer and
// all n have come (the SDK hands notifications to their handler apart
// from the answer), with how long that took.
func (fc *FloodClient) Call(ctx context.Context, n int) (time.Duration, error) {
	before := fc.received.Load()
	fc.target.Store(before + int64(n))
	params := &mcp.CallToolParams{Name: FloodToolName, Arguments: FloodArgs{Count: n}}
	params.SetProgressToken("flood")
	start := time.Now()
	res, err := fc.session.CallTool(ctx, params)
	if err == nil && fc.received.Load() < before+int64(n) {
		select {
		case <-fc.reached:
		case <-ctx.Done():
		}
	}
	took := time.Since(start)
	select {
	case <-fc.reached: // a signal the wait above did not take
	default:
	}
	if err != nil {
		return took, fmt.Errorf("refpeer: flood of %d: %w", n, err)
	}
	if res.IsError {
		return took, fmt.Errorf("refpeer: flood of %d: the tool failed: %v", n, res.Content)
	}
	if got := fc.received.Load() - before; got != int64(n) {
		return took, fmt.Errorf("refpeer: flood of %d: %d progress notifications came: %w", n, got, ctx.Err())
	}
	return took, nil
}

// Close ends the session.
func (fc *FloodClient) Close() error { return fc.session.Close() }
