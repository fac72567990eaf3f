package replay_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/frayproxy/fray/examples/node/nodepeer"
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
