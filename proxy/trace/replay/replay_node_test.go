package replay_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/examples/node/nodepeer"
	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy/forward"
	"github.com/frayproxy/fray/proxy/trace"
	"github.com/frayproxy/fray/proxy/trace/replay"
)

// tsArgs is the TypeScript client's scenario: a tools/call that streams
// eight progress notifications 15 ms apart; the server never closes the
// stream itself, so every reconnection is fray's doing.
var tsArgs = []string{"--count", "8", "--close-after", "0", "--delay-ms", "15", "--timeout", "20000"}

// TestReplayTSUnderLossyResume records the TypeScript SDK pair through
// fray under lossy-resume, then replays the trace to a fresh TypeScript
// client: with the recorded faults it must reconnect exactly as the live
// client did, with the same Last-Event-IDs, and finish its call.
func TestReplayTSUnderLossyResume(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	path, live := recordTS(ctx, t, "lossy-resume", tsArgs...)
	if !live.OK {
		t.Fatalf("live run failed: %s", live.raw)
	}
	if len(live.resumes()) == 0 {
		t.Fatalf("the live run never reconnected, so lossy-resume (seed 42) hit no stream; nothing to compare:\n%s", live.raw)
	}
	tr, err := trace.ReadFile(path, trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("recorded", func(t *testing.T) {
		got, stats := replayTo(ctx, t, tr, replay.ModeRecorded)
		if !got.OK {
			t.Fatalf("client failed against the replay: %s", got.raw)
		}
		if !slices.Equal(got.resumes(), live.resumes()) {
			t.Errorf("replayed client reconnected with Last-Event-IDs %q, live with %q", got.resumes(), live.resumes())
		}
		if !slices.Equal(methods(got), methods(live)) {
			t.Errorf("replayed client sent %v, live %v", methods(got), methods(live))
		}
		if stats.Unmatched != 0 {
			t.Errorf("%d requests matched no recorded exchange", stats.Unmatched)
		}
		t.Logf("live resumes %q, replayed %q; %+v", live.resumes(), got.resumes(), stats)
	})
	t.Run("server", func(t *testing.T) {
		// What the server sent, before fray lost any of it: the client
		// gets every event of the cut stream, so it resumes (if at all)
		// from the last of them, not from where fray cut it.
		got, stats := replayTo(ctx, t, tr, replay.ModeServer)
		if !got.OK {
			t.Fatalf("client failed against the replay without faults: %s", got.raw)
		}
		if slices.Equal(got.resumes(), live.resumes()) {
			t.Errorf("without the recorded faults the client still resumed from %q", got.resumes())
		}
		t.Logf("resumes without faults %q; %+v", got.resumes(), stats)
	})
}

func replayTo(ctx context.Context, t *testing.T, tr *trace.Trace, mode replay.Mode) (clientRun, replay.Stats) {
	t.Helper()
	var logs nodepeer.SyncBuffer
	srv, err := replay.New(replay.Options{Observations: tr.Observations, Mode: mode,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	defer srv.Close()
	run := runNodeClient(ctx, t, hs.URL+"/mcp", tsArgs...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("client: %s\nreplay log:\n%s", run.raw, logs.String())
		}
	})
	return run, srv.Stats()
}

func methods(r clientRun) []string {
	var out []string
	for _, a := range r.Requests {
		out = append(out, a.Method)
	}
	return out
}

// nodeEnv is the Node environment of examples/node, where the TypeScript
// SDK peers live.
func nodeEnv(t *testing.T) nodepeer.Env {
	t.Helper()
	return nodepeer.Require(t, "../../../examples/node", "the TypeScript SDK replay test")
}

// attempt is one request the TypeScript client made, as it reports them.
type attempt struct {
	Method      string  `json:"method"`
	LastEventID *string `json:"lastEventId"`
	Status      *int    `json:"status"`
}

// clientRun is the summary line streamable-client.mjs prints.
type clientRun struct {
	OK        bool      `json:"ok"`
	Error     string    `json:"error"`
	Result    string    `json:"result"`
	Progress  int       `json:"progress"`
	Reconnect int       `json:"reconnects"`
	Requests  []attempt `json:"requests"`
	raw       string
}

// runNodeClient runs the TypeScript client against endpoint.
func runNodeClient(ctx context.Context, t *testing.T, endpoint string, args ...string) clientRun {
	t.Helper()
	stdout, stderr, err := nodeEnv(t).Run(ctx, "streamable-client.mjs", append([]string{endpoint}, args...)...)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	var run clientRun
	if jerr := json.Unmarshal([]byte(lines[len(lines)-1]), &run); jerr != nil {
		t.Fatalf("client printed no JSON summary (%v; %v)\nstdout:\n%s\nstderr:\n%s", jerr, err, stdout, stderr)
	}
	run.raw = lines[len(lines)-1]
	return run
}

// resumes lists the Last-Event-IDs of the client's reconnections, in order.
func (r clientRun) resumes() []string {
	var out []string
	for _, a := range r.Requests {
		if a.Method == "GET" && a.LastEventID != nil {
			out = append(out, *a.LastEventID)
		}
	}
	return out
}

// recordTS runs the TypeScript SDK pair through fray under profile,
// tracing to a file, and returns the trace's path and the client's run.
func recordTS(ctx context.Context, t *testing.T, profile string, clientArgs ...string) (string, clientRun) {
	t.Helper()
	up := nodeEnv(t).Start(ctx, t, "streamable-server.mjs", "--retry-interval", "100").URL
	u, err := url.Parse(strings.TrimSuffix(up, "/mcp"))
	if err != nil {
		t.Fatal(err)
	}
	prof, err := profiles.Resolve(profile)
	if err != nil {
		t.Fatal(err)
	}
	active, err := profiles.NewActive(prof, nil)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "live.jsonl")
	tw, err := trace.Create(path, trace.WriterOptions{Header: trace.Header{Started: time.Now(), Profile: prof.Name, Seed: active.Seed(), ProfileText: string(prof.Text)}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := forward.New(forward.Options{Upstream: u, Faults: active, Observer: tw})
	if err != nil {
		t.Fatal(err)
	}
	fray := httptest.NewServer(p)
	run := runNodeClient(ctx, t, fray.URL+"/mcp", clientArgs...)
	fray.CloseClientConnections()
	fray.Close()
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return path, run
}
