package replay_test

import (
	"context"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy/forward"
	"github.com/frayproxy/fray/proxy/trace"
)

// recordTS runs the TypeScript SDK pair through fray under profile,
// tracing to a file, and returns the trace's path and the client's run.
func recordTS(ctx context.Context, t *testing.T, profile string, clientArgs ...string) (string, clientRun) {
	t.Helper()
	up := startNodeServer(ctx, t, "streamable-server.mjs", "--retry-interval", "100")
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
