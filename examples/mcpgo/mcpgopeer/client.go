package mcpgopeer

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/frayproxy/fray/examples/internal/slowcount"
)

// The transports RunClient speaks.
const (
	Streamable = "streamable" // Streamable HTTP
	SSE        = "sse"        // the 2024-11-05 HTTP+SSE transport
)

// ResumableProtocolVersion is the revision the client asks for by default:
// the newest with Last-Event-ID resumption. Left to itself, mcp-go v1.2.1
// first probes 2026-07-28 with server/discover.
const ResumableProtocolVersion = "2025-11-25"

// ClientOptions configures RunClient. Endpoint and Tool are required.
type ClientOptions struct {
	// Endpoint is the URL of the MCP endpoint (Streamable) or of the SSE
	// endpoint (SSE).
	Endpoint string
	// Transport is Streamable or SSE; empty means Streamable.
	Transport string
	// ProtocolVersion is asked for in initialize; empty means
	// ResumableProtocolVersion.
	ProtocolVersion string
	// Tool is called with Args and a progress token.
	Tool string
	Args map[string]any
	// Progress is how many progress notifications the call must bring
	// (values 1..Progress, in order).
	Progress int
	// Expect must be part of the tool's text result, when set.
	Expect string
	// HTTPClient carries the requests. Nil means a client with its own
	// transport, whose idle connections are closed when RunClient returns.
	HTTPClient *http.Client
}

// Result is what one run observed. Its JSON form matches the summary line
// of examples/node's clients.
type Result struct {
	OK              bool      `json:"ok"`
	Error           string    `json:"error,omitempty"`
	ProtocolVersion string    `json:"protocolVersion"`
	Server          string    `json:"server"`
	Text            string    `json:"result"`
	Progress        []float64 `json:"progressValues"`
}

// progressToken marks the call's progress notifications.
const progressToken = "fray-mcp-go"

// RunClient connects, checks that the tool is listed, calls it and checks
// the result and the progress notifications. It always returns a Result;
// the error says what went wrong, and is in Result.Error too.
func RunClient(ctx context.Context, opts ClientOptions) (*Result, error) {
	res := &Result{}
	err := runClient(ctx, opts, res)
	if err != nil {
		res.Error = err.Error()
	}
	res.OK = err == nil
	return res, err
}

func runClient(ctx context.Context, opts ClientOptions, res *Result) error {
	if opts.Endpoint == "" || opts.Tool == "" {
		return errors.New("mcpgopeer: no endpoint or no tool")
	}
	hc := opts.HTTPClient
	if hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		defer tr.CloseIdleConnections()
		hc = &http.Client{Transport: tr}
	}
	c, err := newClient(opts, hc)
	if err != nil {
		return err
	}
	defer c.Close()
	prog := slowcount.NewProgress(opts.Progress)
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method != "notifications/progress" {
			return
		}
		f := n.Params.AdditionalFields
		if f["progressToken"] != progressToken {
			return
		}
		if v, ok := f["progress"].(float64); ok {
			prog.Add(v)
		}
	})
	if err := c.Start(ctx); err != nil {
		return fmt.Errorf("mcpgopeer: start %s: %w", opts.Endpoint, err)
	}
	version := opts.ProtocolVersion
	if version == "" {
		version = ResumableProtocolVersion
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = version
	init.Params.ClientInfo = mcp.Implementation{Name: "fray-example-mcp-go-client", Version: "1.0.0"}
	ir, err := c.Initialize(ctx, init)
	if err != nil {
		return fmt.Errorf("mcpgopeer: initialize %s: %w", opts.Endpoint, err)
	}
	res.ProtocolVersion, res.Server = ir.ProtocolVersion, ir.ServerInfo.Name

	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return fmt.Errorf("mcpgopeer: list tools: %w", err)
	}
	if !slices.ContainsFunc(tools.Tools, func(t mcp.Tool) bool { return t.Name == opts.Tool }) {
		return fmt.Errorf("mcpgopeer: server does not list %s", opts.Tool)
	}
	call := mcp.CallToolRequest{}
	call.Params.Name = opts.Tool
	call.Params.Arguments = opts.Args
	call.Params.Meta = &mcp.Meta{ProgressToken: progressToken}
	out, err := c.CallTool(ctx, call)
	if err != nil {
		return fmt.Errorf("mcpgopeer: call %s: %w", opts.Tool, err)
	}
	for _, ct := range out.Content {
		if tc, ok := ct.(mcp.TextContent); ok {
			res.Text = tc.Text
			break
		}
	}
	// Notifications are handled apart from the response; give the last ones
	// a moment to land.
	res.Progress = prog.Wait(ctx, time.Second)
	return check(res, out, opts)
}

func newClient(opts ClientOptions, hc *http.Client) (*client.Client, error) {
	switch opts.Transport {
	case "", Streamable:
		t, err := transport.NewStreamableHTTP(opts.Endpoint, transport.WithHTTPBasicClient(hc))
		if err != nil {
			return nil, fmt.Errorf("mcpgopeer: streamable transport for %s: %w", opts.Endpoint, err)
		}
		return client.NewClient(t), nil
	case SSE:
		c, err := client.NewSSEMCPClient(opts.Endpoint, transport.WithHTTPClient(hc))
		if err != nil {
			return nil, fmt.Errorf("mcpgopeer: SSE transport for %s: %w", opts.Endpoint, err)
		}
		return c, nil
	default:
		return nil, fmt.Errorf("mcpgopeer: transport %q: want %q or %q", opts.Transport, Streamable, SSE)
	}
}

func check(res *Result, out *mcp.CallToolResult, opts ClientOptions) error {
	var errs []error
	if out.IsError {
		errs = append(errs, fmt.Errorf("tool returned an error: %q", res.Text))
	}
	if opts.Expect != "" && !strings.Contains(res.Text, opts.Expect) {
		errs = append(errs, fmt.Errorf("result %q does not contain %q", res.Text, opts.Expect))
	}
	if want := slowcount.Steps(opts.Progress); !slices.Equal(res.Progress, want) {
		errs = append(errs, fmt.Errorf("progress %v, want %v", res.Progress, want))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("mcpgopeer: %w", err)
	}
	return nil
}
