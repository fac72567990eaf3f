package interop_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/examples/node/nodepeer"
	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy"
)

// TestPollingServerProfile runs each SDK's client against its own SDK's
// server through fray with the built-in polling-server profile: every
// tools/call answer stream is cut right after its priming event. The
// server never closes a stream itself here, so the call can only finish if
// the client resumes fray's cut with Last-Event-ID and the server replays.
func TestPollingServerProfile(t *testing.T) {
	pairs := []struct {
		name   string
		start  startServer
		client runClient
	}{
		{"ts-client/ts-server", startTSStreamable, runTSNeverClosing},
		{"go-client/go-server", startGoStreamable, runGoNeverClosing},
	}
	for _, pr := range pairs {
		t.Run(pr.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			up := pr.start(ctx, t)
			frayURL, fray, faultLog := startFrayWithProfile(t, up.origin, "polling-server")

			run := pr.client(ctx, t, frayURL+up.path)
			if !run.OK {
				t.Fatalf("client failed through fray under polling-server: %s\nexchanges at fray:\n%s\nfault log:\n%s", run.Error, fray, faultLog)
			}
			if want := fmt.Sprintf("counted to %d", scenarioCount); run.Result != want {
				t.Errorf("result %q, want %q", run.Result, want)
			}
			if len(run.ProgressValues) != scenarioCount {
				t.Errorf("got %d progress notifications %v, want %d", len(run.ProgressValues), run.ProgressValues, scenarioCount)
			}
			if closes := faultLines(faultLog.String(), "close"); len(closes) == 0 {
				t.Errorf("the close fault never fired; fault log:\n%s\nexchanges at fray:\n%s", faultLog, fray)
			}
			requireResumedThroughFray(t, fray, up.serverSent)
		})
	}
}

// runTSNeverClosing runs the TypeScript client with a tool call whose
// server never closes the stream by itself.
func runTSNeverClosing(ctx context.Context, t *testing.T, endpoint string) clientRun {
	env := requireNode(t)
	stdout, stderr, err := env.Run(ctx, "streamable-client.mjs", endpoint,
		"--count", fmt.Sprint(scenarioCount), "--close-after", "0",
		"--delay-ms", fmt.Sprint(scenarioDelayMs), "--timeout", "20000")
	return tsRun(t, stdout, stderr, err)
}

// runGoNeverClosing runs the Go SDK client the same way.
func runGoNeverClosing(ctx context.Context, t *testing.T, endpoint string) clientRun {
	never := 0
	return goRun(ctx, t, endpoint, &never)
}

// startFrayWithProfile runs fray in front of upstream with a built-in
// profile and LogFaults on. It returns fray's URL, the client-side wire
// log, and fray's log (every line, debug included).
func startFrayWithProfile(t *testing.T, upstream, name string) (string, *wireLog, *nodepeer.SyncBuffer) {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatalf("upstream %q: %v", upstream, err)
	}
	prof, err := profiles.Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	buf := &nodepeer.SyncBuffer{}
	logger := slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	eng, err := proxy.New(proxy.Options{Upstream: u, Logger: logger, Profile: prof, LogFaults: true})
	if err != nil {
		t.Fatalf("proxy.New: %v", err)
	}
	wire := &wireLog{}
	return serveTest(t, wire.wrap(eng.Handler())).URL, wire, buf
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
