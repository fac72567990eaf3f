package interop_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/frayproxy/fray/examples/gosdk/refpeer"
)

// listenCaptures are the Go peers' subscriptions/listen streams at
// 2026-07-28, kept in captureDir beside the others: the client opens the
// stream, the server adds a tool once it has acknowledged the stream, and
// the client waits for notifications/tools/list_changed and closes. (The
// TypeScript v2 pair's listen stream is in the ts2 capture.)
var listenCaptures = []capture{
	{name: "go-sdk-listen", pair: "go-sdk←go-sdk-stateless@" + era2026, notifications: []string{"notifications/cancelled"}},
	{name: "mcp-go-listen", pair: "mcp-go←mcp-go@" + era2026},
}

// TestCaptureListen2026 takes the listen captures through fray, as
// TestCapture2026 takes the others.
func TestCaptureListen2026(t *testing.T) {
	if testing.Short() {
		t.Skip("captures run real peers; not in -short (TestCaptured2026 reads the kept ones)")
	}
	runs := map[string]func(t *testing.T) (http.Handler, func(*wireLog) runClientFor){
		"go-sdk-listen": goSDKListen, "mcp-go-listen": mcpGoListen,
	}
	for _, c := range listenCaptures {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), eraPairTimeout)
			defer cancel()
			h, client := runs[c.name](t)
			wire := takeCapture(ctx, t, c, upstream{origin: serveTest(t, h).URL, path: "/mcp"}, client)
			if listens := countMethod(wire, "subscriptions/listen"); listens != 1 {
				t.Errorf("%d subscriptions/listen requests, want 1", listens)
			}
		})
	}
}

// goSDKListen serves refpeer's server statelessly and runs the Go SDK's
// client with a ToolListChangedHandler, which makes Connect open a
// subscriptions/listen stream.
func goSDKListen(t *testing.T) (http.Handler, func(*wireLog) runClientFor) {
	server := refpeer.NewServer(refpeer.ServerOptions{})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: true})
	return h, func(rec *wireLog) runClientFor {
		return func(ctx context.Context, t *testing.T, endpoint string, timeout time.Duration) clientRun {
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			changed := make(chan struct{}, 1)
			client := mcp.NewClient(&mcp.Implementation{Name: "fray-example-gosdk-client", Version: "1.0.0"}, &mcp.ClientOptions{
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { signal(changed) },
			})
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint},
				&mcp.ClientSessionOptions{ProtocolVersion: era2026})
			if err != nil {
				return clientRun{Error: "connect: " + err.Error()}
			}
			run := clientRun{ProtocolVersion: cs.InitializeResult().ProtocolVersion}
			run.Error = listChanged(ctx, rec, changed, func() {
				mcp.AddTool(server, &mcp.Tool{Name: "added"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
					return &mcp.CallToolResult{}, nil, nil
				})
			})
			run.OK = run.Error == ""
			if err := cs.Close(); err != nil && run.OK {
				run.OK, run.Error = false, "close: "+err.Error()
			}
			return run
		}
	}
}

// mcpGoListen serves an mcp-go server that announces tools.listChanged, and
// runs mcp-go's client with ListenAsync.
func mcpGoListen(t *testing.T) (http.Handler, func(*wireLog) runClientFor) {
	server := mcpgoserver.NewMCPServer("fray-example-mcp-go", "1.0.0", mcpgoserver.WithToolCapabilities(true))
	return mcpgoserver.NewStreamableHTTPServer(server), func(rec *wireLog) runClientFor {
		return func(ctx context.Context, t *testing.T, endpoint string, timeout time.Duration) clientRun {
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			tr, err := mcpgotransport.NewStreamableHTTP(endpoint)
			if err != nil {
				return clientRun{Error: err.Error()}
			}
			c := mcpgoclient.NewClient(tr)
			defer c.Close()
			changed := make(chan struct{}, 1)
			c.OnNotification(func(n mcpgo.JSONRPCNotification) {
				if n.Method == "notifications/tools/list_changed" {
					signal(changed)
				}
			})
			if err := c.Start(ctx); err != nil {
				return clientRun{Error: "start: " + err.Error()}
			}
			init := mcpgo.InitializeRequest{}
			init.Params.ProtocolVersion = era2026
			init.Params.ClientInfo = mcpgo.Implementation{Name: "fray-example-mcp-go-client", Version: "1.0.0"}
			ir, err := c.Initialize(ctx, init)
			if err != nil {
				return clientRun{Error: "initialize: " + err.Error()}
			}
			run := clientRun{ProtocolVersion: ir.ProtocolVersion}
			stop, err := c.ListenAsync(ctx, mcpgo.SubscriptionFilter{ToolsListChanged: true}, nil)
			if err != nil {
				run.Error = "listen: " + err.Error()
				return run
			}
			defer stop()
			run.Error = listChanged(ctx, rec, changed, func() {
				server.AddTool(mcpgo.NewTool("added"), func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
					return mcpgo.NewToolResultText("added"), nil
				})
			})
			run.OK = run.Error == ""
			return run
		}
	}
}

// listChanged waits for the listen stream's acknowledgement to pass rec,
// then adds a tool and waits for changed: "" when it came, else why not.
func listChanged(ctx context.Context, rec *wireLog, changed <-chan struct{}, addTool func()) string {
	if err := rec.waitFor(ctx, "notifications/subscriptions/acknowledged"); err != nil {
		return "no acknowledged listen stream: " + err.Error()
	}
	addTool()
	select {
	case <-changed:
		return ""
	case <-ctx.Done():
		return "no notifications/tools/list_changed: " + ctx.Err().Error()
	}
}

// signal sends on ch unless a signal is already waiting.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// countMethod counts the requests of method in wire.
func countMethod(wire []wireExchange, method string) int {
	n := 0
	for _, ex := range wire {
		var msg rpc
		if err := json.Unmarshal(ex.RequestBody, &msg); err == nil && msg.Method == method {
			n++
		}
	}
	return n
}
