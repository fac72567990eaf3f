package interop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/examples/gosdk/refpeer"
	"github.com/frayproxy/fray/examples/node/nodepeer"
	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy"
)

// The slow-count scenario used by every pair: 8 steps, stream closed after
// step 3, so at least five notifications and the result must come over the
// resumed stream.
const (
	scenarioCount      = 8
	scenarioCloseAfter = 3
	scenarioDelayMs    = 15
)

// upstream is a running server under test.
type upstream struct {
	origin     string            // scheme://host:port
	path       string            // MCP endpoint path, e.g. /mcp
	serverSent func(string) bool // whether the server emitted this SSE id
}

// clientRun is what a client reported.
type clientRun struct {
	OK              bool      `json:"ok"`
	Error           string    `json:"error"`
	ProtocolVersion string    `json:"protocolVersion"`
	Result          string    `json:"result"`
	ProgressValues  []float64 `json:"progressValues"`
}

type (
	startServer func(ctx context.Context, t *testing.T) upstream
	runClient   func(ctx context.Context, t *testing.T, endpoint string) clientRun
)

// TestStreamableResumptionThroughFray runs each client against each server
// with fray in between. The server closes the tool call's SSE stream after
// three progress notifications; the call must still complete with every
// notification, and the resumption must be visible at fray: a GET carrying
// a Last-Event-ID the server sent.
func TestStreamableResumptionThroughFray(t *testing.T) {
	servers := []struct {
		name  string
		start startServer
	}{
		{"ts-server", startTSStreamable},
		{"go-server", startGoStreamable},
	}
	clients := []struct {
		name string
		run  runClient
	}{
		{"ts-client", tsStreamableClient(scenarioCloseAfter)},
		{"go-client", goStreamableClient(scenarioCloseAfter)},
	}
	for _, s := range servers {
		for _, c := range clients {
			t.Run(c.name+"/"+s.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				up := s.start(ctx, t)
				frayURL, fray := startFray(t, up.origin)

				run := c.run(ctx, t, frayURL+up.path)
				if !run.OK {
					t.Fatalf("client failed through fray: %s\nexchanges at fray:\n%s", run.Error, fray)
				}
				if run.ProtocolVersion != "2025-11-25" {
					t.Errorf("negotiated %q, want 2025-11-25 (the revision with resumption)", run.ProtocolVersion)
				}
				checkCounted(t, run)
				requireResumedThroughFray(t, fray, up.serverSent)
			})
		}
	}
}

// TestPollingServerProfile runs each SDK's client against its own SDK's
// server through fray with the built-in polling-server profile: every
// tools/call answer stream is cut right after its priming event. The
// server never closes a stream itself here, so the call can only finish if
// the client resumes fray's cut with Last-Event-ID and the server replays.
func TestPollingServerProfile(t *testing.T) {
	for _, pr := range sdkPairs {
		t.Run(pr.name+"-client/"+pr.name+"-server", func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			up := pr.start(ctx, t)
			frayURL, fray, faultLog := startFrayWithProfile(t, up.origin, "polling-server")

			run := pr.client(ctx, t, frayURL+up.path)
			if !run.OK {
				t.Fatalf("client failed through fray under polling-server: %s\nexchanges at fray:\n%s\nfault log:\n%s", run.Error, fray, faultLog)
			}
			checkCounted(t, run)
			if closes := faultLines(faultLog.String(), "close"); len(closes) == 0 {
				t.Errorf("the close fault never fired; fault log:\n%s\nexchanges at fray:\n%s", faultLog, fray)
			}
			requireResumedThroughFray(t, fray, up.serverSent)
		})
	}
}

// checkCounted fails t unless run counted to scenarioCount with every
// progress notification.
func checkCounted(t *testing.T, run clientRun) {
	t.Helper()
	if want := fmt.Sprintf("counted to %d", scenarioCount); run.Result != want {
		t.Errorf("result %q, want %q", run.Result, want)
	}
	if len(run.ProgressValues) != scenarioCount {
		t.Errorf("got %d progress notifications %v, want %d", len(run.ProgressValues), run.ProgressValues, scenarioCount)
	}
}

// startTSStreamable runs examples/node/streamable-server.mjs with its event
// ids traced on stdout.
func startTSStreamable(ctx context.Context, t *testing.T) upstream {
	s := requireNode(t).Start(ctx, t, "streamable-server.mjs", "--retry-interval", "100", "--trace-events")
	origin, path := splitURL(t, s.URL)
	return upstream{origin: origin, path: path, serverSent: s.Sent}
}

// startGoStreamable serves refpeer in-process; the ids it sends are read off
// its responses before they reach fray.
func startGoStreamable(ctx context.Context, t *testing.T) upstream {
	wire := newWireLog()
	mux := http.NewServeMux()
	mux.Handle("/mcp", refpeer.NewHandler(refpeer.ServerOptions{RetryAfter: 100 * time.Millisecond}))
	return upstream{origin: serveTest(t, wire.wrap(mux)).URL, path: "/mcp", serverSent: wire.sentID}
}

// tsStreamableClient runs examples/node/streamable-client.mjs, the server
// closing the tool's stream after closeAfter steps (0: never).
func tsStreamableClient(closeAfter int) runClient {
	return func(ctx context.Context, t *testing.T, endpoint string) clientRun {
		stdout, stderr, err := requireNode(t).Run(ctx, "streamable-client.mjs", endpoint,
			"--count", strconv.Itoa(scenarioCount), "--close-after", strconv.Itoa(closeAfter),
			"--delay-ms", strconv.Itoa(scenarioDelayMs), "--timeout", "20000")
		return tsRun(t, stdout, stderr, err)
	}
}

// tsRun reads the summary streamable-client.mjs printed.
func tsRun(t *testing.T, stdout, stderr string, err error) clientRun {
	line := lastJSONLine(stdout)
	var run clientRun
	if jerr := json.Unmarshal([]byte(line), &run); jerr != nil {
		t.Fatalf("client output is not a JSON summary (%v; exit: %v)\nstdout:\n%s\nstderr:\n%s", jerr, err, stdout, stderr)
	}
	if err != nil && run.OK {
		t.Fatalf("client reported ok but failed: %v\nstderr:\n%s", err, stderr)
	}
	if !run.OK && run.Error == "" {
		run.Error = fmt.Sprintf("%v; stderr: %s", err, stderr)
	}
	t.Logf("ts client: %s", line)
	return run
}

// goStreamableClient runs refpeer.RunClient in-process, the server closing
// the tool's stream after closeAfter steps (0: never).
func goStreamableClient(closeAfter int) runClient {
	return func(ctx context.Context, t *testing.T, endpoint string) clientRun {
		res, err := refpeer.RunClient(ctx, refpeer.ClientOptions{
			Endpoint:      endpoint,
			Count:         scenarioCount,
			CloseAfter:    &closeAfter,
			Delay:         scenarioDelayMs * time.Millisecond,
			RequireResume: closeAfter > 0,
		})
		if res != nil {
			t.Logf("go client: %+v", *res)
		}
		return goSDKResult(res, err)
	}
}

// goSDKResult is what the Go SDK's client (refpeer) reported.
func goSDKResult(res *refpeer.Result, err error) clientRun {
	run := clientRun{OK: err == nil}
	if err != nil {
		run.Error = err.Error()
	}
	if res != nil {
		run.ProtocolVersion, run.Result, run.ProgressValues = res.ProtocolVersion, res.Text, res.Progress
	}
	return run
}

// startFrayWithProfile runs fray in front of upstream with a built-in
// profile and LogFaults on. It returns fray's URL, the client-side wire
// log, and fray's log (every line, debug included).
func startFrayWithProfile(t *testing.T, upstream, name string) (string, *wireLog, *nodepeer.SyncBuffer) {
	t.Helper()
	prof, err := profiles.Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	buf := &nodepeer.SyncBuffer{}
	logger := slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	frayURL, wire := startFrayWith(t, upstream, proxy.Options{Logger: logger, Profile: prof, LogFaults: true})
	return frayURL, wire, buf
}

// faultLines returns fray's "fault" log lines for kind.
func faultLines(log, kind string) []string {
	var out []string
	for line := range strings.Lines(log) {
		if strings.Contains(line, "msg=fault ") && strings.Contains(strings.TrimSpace(line)+" ", " kind="+kind+" ") {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}
