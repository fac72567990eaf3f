package interop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/examples/gosdk/refpeer"
	"github.com/frayproxy/fray/examples/mcpgo/mcpgopeer"
)

// The calls the third-party pairs make. Each streams progress, so that a
// fault has events to cut, lose or delay between the request and its
// response.
var (
	// callSlowCount is slow-count on servers that never close a stream by
	// themselves (fastmcp, tmcp, mcp-go, the legacy servers).
	callSlowCount = toolCall{
		Tool: "slow-count", Args: map[string]any{"count": 6, "delayMs": 40},
		Progress: 6, Expect: "counted to 6",
	}
	// callMCPGo is a longer slow-count on the mcp-go server, which sends a
	// call's progress on the call's stream and the standalone GET stream
	// alike (see the ts←mcp-go pair), so their order cannot be held; with
	// sixteen steps, lossy-resume's cut (after two events of the call's
	// stream, three lost) comes while the call still runs.
	callMCPGo = toolCall{
		Tool: "slow-count", Args: map[string]any{"count": 16, "delayMs": 40},
		Progress: 16, Expect: "counted to 16", AnyOrder: true,
	}
	// callSlowCountClosing is slow-count on the official SDKs' servers
	// (examples/node/streamable-server.mjs, examples/gosdk): the server
	// closes the call's stream after step 3 (SEP-1699), so the client must
	// resume with Last-Event-ID to finish, faults or not.
	callSlowCountClosing = toolCall{
		Tool: "slow-count", Args: map[string]any{"count": 8, "closeAfter": 3, "delayMs": 15},
		Progress: 8, Expect: "counted to 8",
	}
	// callLongRunning is server-everything's own long-running tool: six
	// steps 100 ms apart, one progress notification each.
	callLongRunning = toolCall{
		Tool: "trigger-long-running-operation", Args: map[string]any{"duration": 0.6, "steps": 6},
		Progress: 6, Expect: "Long running operation completed",
	}
	// callEverythingLong is the same tool, running longer than the
	// TypeScript client waits before it resumes a cut stream (1 s, or the
	// profile's 500 ms retry), so that a resumption meets the call still
	// running: it is then the server's live events, not its replay, that
	// must reach the resumed stream. The client lists the tools while the
	// call runs, so that the session has another stream's events stored
	// after the call's first ones.
	callEverythingLong = toolCall{
		Tool: "trigger-long-running-operation", Args: map[string]any{"duration": 3.2, "steps": 8},
		Progress: 8, Expect: "Long running operation completed", SideCallAfter: 150 * time.Millisecond,
	}
	// callBridged is callLongRunning through mcp-proxy, which loses the
	// call's last progress notifications when the result overtakes them:
	// in most runs it sends five of the six, in some all six, and once,
	// on a busy machine, four. So any first k suffice here; a gap, a
	// duplicate or a foreign progress still fails the client. Through fray,
	// checkDeliveredProgress holds the client to exactly the notifications
	// fray's trace shows it delivered.
	callBridged = toolCall{
		Tool: "trigger-long-running-operation", Args: map[string]any{"duration": 0.6, "steps": 6},
		Progress: 6, ProgressMin: 1, Expect: "Long running operation completed",
	}
)

// toolCall is the one call a third-party client makes.
type toolCall struct {
	Tool     string
	Args     map[string]any
	Progress int // progress notifications the call must bring, 1..Progress
	// ProgressMin, when set, lets the call end with progress 1..k for
	// ProgressMin <= k <= Progress: only the last ones may be missing.
	ProgressMin int
	Expect      string // text the result must contain
	// AnyOrder accepts the progress in any order, each once.
	AnyOrder bool
	// SideCallAfter, when set, has the client list the tools that long
	// after the call began, while it runs: a second request stream of the
	// session, with events of its own.
	SideCallAfter time.Duration
}

func (c toolCall) argsJSON() string {
	b, err := json.Marshal(c.Args)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// inspectorArgs are the call's arguments as inspector-cli's key=value pairs.
func (c toolCall) inspectorArgs() []string {
	var out []string
	for k, v := range c.Args {
		out = append(out, "--arg", fmt.Sprintf("%s=%v", k, v))
	}
	return out
}

// nodeUpstream starts a launcher of examples/node and returns it as an
// upstream.
func nodeUpstream(script string, args ...string) startServer {
	return func(ctx context.Context, t *testing.T) upstream {
		env := requireNode(t)
		s := env.Start(ctx, t, script, args...)
		origin, path := splitURL(t, s.URL)
		return upstream{origin: origin, path: path, serverSent: func(string) bool { return false }}
	}
}

var (
	startEverything        = nodeUpstream("thirdparty/everything-server.mjs", "streamableHttp")
	startFastMCP           = nodeUpstream("thirdparty/fastmcp-server.mjs")
	startTMCP              = nodeUpstream("thirdparty/tmcp-server.mjs")
	startSupergateway      = nodeUpstream("thirdparty/supergateway.mjs", "streamableHttp")
	startSupergatewaySSE   = nodeUpstream("thirdparty/supergateway.mjs", "sse")
	startMCPProxy          = nodeUpstream("thirdparty/mcp-proxy.mjs", "stream")
	startMCPProxySSE       = nodeUpstream("thirdparty/mcp-proxy.mjs", "sse")
	startTSLegacy          = nodeUpstream("legacy-server.mjs")
	startTSStreamableThird = nodeUpstream("streamable-server.mjs", "--retry-interval", "100")
)

// startMCPGo serves mcpgopeer in-process over Streamable HTTP (event store
// on) or the legacy transport.
func startMCPGo(kind string) startServer {
	return func(ctx context.Context, t *testing.T) upstream {
		var h http.Handler
		path := "/mcp"
		if kind == mcpgopeer.SSE {
			h, path = mcpgopeer.NewSSEHandler(), "/sse"
		} else {
			h = mcpgopeer.NewStreamableHandler(mcpgopeer.ServerOptions{})
		}
		return upstream{origin: serveTest(t, h).URL, path: path, serverSent: func(string) bool { return false }}
	}
}

// tsThirdParty runs thirdparty/ts-client.mjs: the official TypeScript
// SDK's client, directly (via streamable or sse) or behind mcp-remote
// (via mcp-remote, with strategy).
func tsThirdParty(call toolCall, via, strategy string) runClientFor {
	return func(ctx context.Context, t *testing.T, endpoint string, timeout time.Duration) clientRun {
		env := requireNode(t)
		args := []string{"thirdparty/ts-client.mjs", endpoint, "--via", via, "--tool", call.Tool, "--args", call.argsJSON(),
			"--progress", fmt.Sprint(call.Progress), "--expect", call.Expect, "--timeout", fmt.Sprint(timeout.Milliseconds())}
		if strategy != "" {
			args = append(args, "--strategy", strategy)
		}
		if call.AnyOrder {
			args = append(args, "--progress-any-order")
		}
		if call.SideCallAfter > 0 {
			args = append(args, "--side-call-after", fmt.Sprint(call.SideCallAfter.Milliseconds()))
		}
		if call.ProgressMin > 0 {
			args = append(args, "--progress-min", fmt.Sprint(call.ProgressMin))
		}
		stdout, stderr, err := env.Run(ctx, args[0], args[1:]...)
		return parseRun(t, stdout, stderr, err)
	}
}

// inspectorThirdParty runs thirdparty/inspector-client.mjs, which runs
// inspector-cli's tools/call.
func inspectorThirdParty(call toolCall, transport string) runClientFor {
	return func(ctx context.Context, t *testing.T, endpoint string, timeout time.Duration) clientRun {
		env := requireNode(t)
		args := append([]string{endpoint, "--tool", call.Tool, "--transport", transport, "--expect", call.Expect,
			"--timeout", fmt.Sprint(timeout.Milliseconds())}, call.inspectorArgs()...)
		stdout, stderr, err := env.Run(ctx, "thirdparty/inspector-client.mjs", args...)
		return parseRun(t, stdout, stderr, err)
	}
}

// mcpGoClient runs mcpgopeer.RunClient in-process.
func mcpGoClient(call toolCall, kind string) runClientFor { return mcpGoAt(call, kind, "") }

// mcpGoAt runs mcpgopeer.RunClient in-process asking for version ("": its
// default).
func mcpGoAt(call toolCall, kind, version string) runClientFor {
	return func(ctx context.Context, t *testing.T, endpoint string, timeout time.Duration) clientRun {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		res, err := mcpgopeer.RunClient(ctx, mcpgopeer.ClientOptions{
			Endpoint: endpoint, Transport: kind, ProtocolVersion: version,
			Tool: call.Tool, Args: call.Args, Progress: call.Progress, Expect: call.Expect,
		})
		run := clientRun{OK: err == nil, ProtocolVersion: res.ProtocolVersion, Result: res.Text, ProgressValues: res.Progress}
		if err != nil {
			run.Error = err.Error()
		}
		return run
	}
}

// goSDKClient runs the official Go SDK's client (examples/gosdk/refpeer)
// calling slow-count (six steps) on a server that never closes the stream
// itself; anyOrder accepts the progress in any order.
func goSDKClient(anyOrder bool) runClientFor {
	never := 0
	return goSDKRun(refpeer.ClientOptions{Count: callSlowCount.Progress, CloseAfter: &never, Delay: 40 * time.Millisecond, AnyOrder: anyOrder})
}

// parseRun reads the one JSON line a Node client printed.
func parseRun(t *testing.T, stdout, stderr string, err error) clientRun {
	t.Helper()
	line := lastJSONLine(stdout)
	var run clientRun
	if jerr := json.Unmarshal([]byte(line), &run); jerr != nil {
		return clientRun{Error: fmt.Sprintf("no JSON summary (%v; exit: %v); stderr: %s", jerr, err, tail(stderr, 800))}
	}
	if err != nil && run.OK {
		run.OK, run.Error = false, fmt.Sprintf("reported ok but exited: %v", err)
	}
	if !run.OK && run.Error == "" {
		run.Error = fmt.Sprintf("%v; stderr: %s", err, tail(stderr, 800))
	}
	return run
}

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
