package interop_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/frayproxy/fray/examples/gosdk/refpeer"
	"github.com/frayproxy/fray/examples/mcpgo/mcpgopeer"
)

// The two protocol revisions the official SDKs serve side by side from one
// endpoint.
const (
	era2025 = "2025-11-25" // sessions, SSE ids, Last-Event-ID resumption
	era2026 = "2026-07-28" // stateless: no sessions, no ids, no resumption
	// eraAuto is a client that asks for 2026-07-28 and falls back to the
	// initialize handshake when the server does not offer it.
	eraAuto = "auto"
)

// The call every era pair makes: six steps 40 ms apart, one progress
// notification each, with closeAfter 0 so that the servers whose tool can
// close its own stream (refpeer, streamable-server.mjs) do not: a stateless
// server keeps no events to resume from. The pair that shows what happens
// when it does anyway uses callSlowCountClosing.
var callEra = toolCall{
	Tool: "slow-count", Args: map[string]any{"count": 6, "closeAfter": 0, "delayMs": 40},
	Progress: 6, Expect: "counted to 6",
}

// startTSModern runs examples/node/modern-server.mjs: the TypeScript SDK
// v2's createMcpHandler, 2026-07-28 per request and the stateless legacy
// fallback for 2025-era clients; each completed call publishes
// notifications/tools/list_changed to the open subscriptions/listen streams.
var startTSModern = nodeUpstream("modern-server.mjs", "--notify-list-changed")

// startGoStateless serves refpeer's stateless handler (the Go SDK with
// StreamableHTTPOptions.Stateless) in-process.
func startGoStateless(ctx context.Context, t *testing.T) upstream {
	mux := http.NewServeMux()
	mux.Handle("/mcp", refpeer.NewStatelessHandler(refpeer.ServerOptions{}))
	return upstream{origin: serveTest(t, mux).URL, path: "/mcp", serverSent: func(string) bool { return false }}
}

// tsModernClient runs examples/node/modern-client.mjs at era (2026-07-28
// pinned, 2025-11-25, or auto); listen opens a subscriptions/listen stream
// before the call when the era is 2026-07-28, and waits for the
// list_changed the server publishes after it.
func tsModernClient(era string, listen bool) runClientFor {
	return withNodeSlot(func(ctx context.Context, t *testing.T, endpoint string, timeout time.Duration) clientRun {
		env := requireNode(t)
		args := []string{endpoint, "--era", era, "--count", fmt.Sprint(callEra.Progress),
			"--delay-ms", fmt.Sprint(callEra.Args["delayMs"]), "--close-after", fmt.Sprint(callEra.Args["closeAfter"]), "--timeout", fmt.Sprint(timeout.Milliseconds())}
		if listen {
			args = append(args, "--listen", "--expect-list-changed", "1")
		}
		stdout, stderr, err := env.Run(ctx, "modern-client.mjs", args...)
		return parseRun(t, stdout, stderr, err)
	})
}

// nodeSlots bounds how many Node clients the era tests run at once: a
// pair runs all its profiles together, and thirty-odd Node processes
// starting at once on two cores can take longer than a client's timeout.
var nodeSlots = make(chan struct{}, 8)

// withNodeSlot runs client once a Node slot is free; the wait is not part
// of the client's timeout, which its process measures from its start.
func withNodeSlot(client runClientFor) runClientFor {
	return func(ctx context.Context, t *testing.T, endpoint string, timeout time.Duration) clientRun {
		select {
		case nodeSlots <- struct{}{}:
		case <-ctx.Done():
			return clientRun{Error: "no Node slot before the pair's deadline: " + ctx.Err().Error()}
		}
		defer func() { <-nodeSlots }()
		return client(ctx, t, endpoint, timeout)
	}
}

// goSDKEraClient runs the Go SDK's client (refpeer) asking for version:
// at 2026-07-28 it sends server/discover, and falls back to initialize when
// the server does not offer that revision. It calls slow-count as callEra
// does, with closeAfter 0.
func goSDKEraClient(version string) runClientFor { return goSDKEraClientClosing(version, 0) }

// goSDKEraClientClosing is goSDKEraClient asking slow-count to close its
// stream after step closeAfter (0: never).
func goSDKEraClientClosing(version string, closeAfter int) runClientFor {
	return goSDKRun(refpeer.ClientOptions{ProtocolVersion: version, Count: callEra.Progress, CloseAfter: &closeAfter, Delay: 40 * time.Millisecond})
}

// goSDKRun runs the Go SDK's client (refpeer) with opts, at the endpoint
// it is given.
func goSDKRun(opts refpeer.ClientOptions) runClientFor {
	return func(ctx context.Context, t *testing.T, endpoint string, timeout time.Duration) clientRun {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		o := opts
		o.Endpoint = endpoint
		return goSDKResult(refpeer.RunClient(ctx, o))
	}
}

// mcpGoEraClient runs mcp-go's client over Streamable HTTP asking for
// version: at 2026-07-28 it probes with server/discover (its modern mode)
// and falls back to initialize when the server does not answer it.
func mcpGoEraClient(version string) runClientFor {
	return mcpGoAt(callEra, mcpgopeer.Streamable, version)
}
