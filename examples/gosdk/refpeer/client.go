package refpeer

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/frayproxy/fray/examples/internal/slowcount"
)

// ResumableProtocolVersion is the revision the client asks for by default:
// the newest one with server-side stream close and Last-Event-ID resumption.
// From 2026-07-28 on resumption is gone, and the scenario would not run.
const ResumableProtocolVersion = "2025-11-25"

// ClientOptions configures RunClient. Only Endpoint is required.
type ClientOptions struct {
	// Endpoint is the MCP endpoint URL, e.g. http://127.0.0.1:7070/mcp.
	Endpoint string
	// HTTPClient carries the requests. Nil means a client with its own
	// transport, so idle connections are closed when RunClient returns.
	HTTPClient *http.Client
	// MaxRetries bounds reconnection attempts per stream, as in
	// mcp.StreamableClientTransport: 0 means the SDK default (5), negative
	// means none.
	MaxRetries int
	// ProtocolVersion is sent in initialize. Empty means
	// ResumableProtocolVersion.
	ProtocolVersion string
	// Count, CloseAfter and Delay are passed to slow-count. Zero Count
	// means DefaultCount, nil CloseAfter DefaultCloseAfter (0: never close),
	// zero Delay DefaultDelay.
	Count      int
	CloseAfter *int
	Delay      time.Duration
	// RequireResume makes RunClient fail when the stream was closed but no
	// GET with Last-Event-ID was sent.
	RequireResume bool
	// AnyOrder accepts the progress notifications in any order, each once:
	// a server that sends a call's notifications on two streams (the call's
	// and the standalone GET stream) cannot be held to their order.
	AnyOrder bool
}

// Result is what one run observed.
type Result struct {
	// ProtocolVersion is the negotiated revision.
	ProtocolVersion string `json:"protocolVersion"`
	// SessionID is the Mcp-Session-Id the server assigned, if any.
	SessionID string `json:"sessionId,omitempty"`
	// Text is the tool's text result.
	Text string `json:"result"`
	// Structured is the tool's structured result.
	Structured SlowCountResult `json:"structured"`
	// Progress lists the progress values received for the call, in order.
	Progress []float64 `json:"progressValues"`
	// Resumptions lists the Last-Event-ID of every GET the client sent to
	// resume a stream, in order.
	Resumptions []string `json:"resumptions"`
}

// RunClient connects to opts.Endpoint, checks that slow-count is listed,
// calls it with a progress token and verifies that every progress
// notification and the expected result arrived. It returns what it saw,
// with an error if anything was missing or ctx ended first.
func RunClient(ctx context.Context, opts ClientOptions) (*Result, error) {
	if opts.Endpoint == "" {
		return nil, errors.New("refpeer: no endpoint")
	}
	count := opts.Count
	if count == 0 {
		count = DefaultCount
	}
	closeAfter := DefaultCloseAfter
	if opts.CloseAfter != nil {
		closeAfter = *opts.CloseAfter
	}
	delay := opts.Delay
	if delay == 0 {
		delay = DefaultDelay
	}
	version := opts.ProtocolVersion
	if version == "" {
		version = ResumableProtocolVersion
	}

	hc := opts.HTTPClient
	if hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		defer tr.CloseIdleConnections()
		hc = &http.Client{Transport: tr}
	}
	rec := &resumeRecorder{next: hc.Transport}
	if rec.next == nil {
		rec.next = http.DefaultTransport
	}
	observed := *hc
	observed.Transport = rec

	prog := slowcount.NewProgress(count)
	client := mcp.NewClient(&mcp.Implementation{Name: "fray-example-gosdk-client", Version: "1.0.0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			if req.Params.ProgressToken == progressToken {
				prog.Add(req.Params.Progress)
			}
		},
	})
	transport := &mcp.StreamableClientTransport{Endpoint: opts.Endpoint, HTTPClient: &observed, MaxRetries: opts.MaxRetries}
	cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return nil, fmt.Errorf("refpeer: connect %s: %w", opts.Endpoint, err)
	}
	defer cs.Close()

	res := &Result{SessionID: cs.ID()}
	if ir := cs.InitializeResult(); ir != nil {
		res.ProtocolVersion = ir.ProtocolVersion
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		return res, fmt.Errorf("refpeer: list tools: %w", err)
	}
	if !slices.ContainsFunc(tools.Tools, func(t *mcp.Tool) bool { return t.Name == ToolName }) {
		return res, fmt.Errorf("refpeer: server does not list %s", ToolName)
	}

	params := &mcp.CallToolParams{
		Name:      ToolName,
		Arguments: map[string]any{"count": count, "closeAfter": closeAfter, "delayMs": delay.Milliseconds()},
	}
	params.SetProgressToken(progressToken)
	out, err := cs.CallTool(ctx, params)
	if err != nil {
		return res, fmt.Errorf("refpeer: call %s: %w", ToolName, err)
	}
	// Notifications are dispatched apart from the response; give the last
	// ones until ctx ends to be delivered.
	res.Progress = prog.Wait(ctx, time.Second)
	res.Resumptions = rec.ids()
	if len(out.Content) > 0 {
		if tc, ok := out.Content[0].(*mcp.TextContent); ok {
			res.Text = tc.Text
		}
	}
	if m, ok := out.StructuredContent.(map[string]any); ok {
		c, _ := m["counted"].(float64)
		res.Structured.Counted = int(c)
		res.Structured.StreamClosed, _ = m["streamClosed"].(bool)
	}
	return res, check(res, out, count, closeAfter, opts.RequireResume, opts.AnyOrder)
}

// progressToken marks the call's progress notifications.
const progressToken = "fray-refpeer"

func check(res *Result, out *mcp.CallToolResult, count, closeAfter int, requireResume, anyOrder bool) error {
	var errs []error
	if out.IsError {
		errs = append(errs, fmt.Errorf("tool returned an error: %q", res.Text))
	}
	if want := fmt.Sprintf("counted to %d", count); res.Text != want {
		errs = append(errs, fmt.Errorf("result %q, want %q", res.Text, want))
	}
	want := slowcount.Steps(count)
	got := res.Progress
	if anyOrder {
		got = slices.Sorted(slices.Values(got))
	}
	if !slices.Equal(got, want) {
		errs = append(errs, fmt.Errorf("progress %v, want %v", res.Progress, want))
	}
	if requireResume && closeAfter > 0 && closeAfter <= count && len(res.Resumptions) == 0 {
		errs = append(errs, errors.New("the server closed the stream but no GET with Last-Event-ID was sent"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("refpeer: %w", err)
	}
	return nil
}

// resumeRecorder is an http.RoundTripper that notes the Last-Event-ID of
// every GET, i.e. every resumption the client transport attempts.
type resumeRecorder struct {
	next http.RoundTripper
	mu   sync.Mutex
	seen []string
}

func (r *resumeRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if id := req.Header.Get("Last-Event-ID"); req.Method == http.MethodGet && id != "" {
		r.mu.Lock()
		r.seen = append(r.seen, id)
		r.mu.Unlock()
	}
	return r.next.RoundTrip(req)
}

func (r *resumeRecorder) ids() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen)
}
