package scripted_test

import (
	"context"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/frayproxy/fray/examples/scripted"
	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy"
)

func TestCorrectPairDirect(t *testing.T) {
	srv := httptest.NewServer(scripted.NewServer(scripted.ServerOptions{}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := scripted.RunClient(ctx, scripted.ClientOptions{URL: srv.URL + "/mcp", Calls: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Completed != 3 || res.Sessions != 1 || len(res.Resumes) != 0 {
		t.Errorf("result %+v, want 3 calls in one session with no resumption", res)
	}
}

// TestCorrectPairResumesThroughPollingServer: with every tools/call stream
// cut after its priming event, the client resumes each call from the
// priming event's id and finishes.
func TestCorrectPairResumesThroughPollingServer(t *testing.T) {
	srv := httptest.NewServer(scripted.NewServer(scripted.ServerOptions{}))
	defer srv.Close()
	fray := throughFray(t, srv.URL, "polling-server")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := scripted.RunClient(ctx, scripted.ClientOptions{URL: fray + "/mcp", Calls: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"0-0", "1-0"}
	if res.Completed != 2 || len(res.Resumes) != 2 || res.Resumes[0] != want[0] || res.Resumes[1] != want[1] {
		t.Errorf("result %+v, want 2 calls each resumed from its priming id %v", res, want)
	}
}

// TestLegacyPairThroughFray: the HTTP+SSE pair finishes its calls through
// fray under the legacy-sse profile, the endpoint event rewritten and the
// stream fragmented.
func TestLegacyPairThroughFray(t *testing.T) {
	srv := httptest.NewServer(scripted.NewLegacyServer(scripted.ServerOptions{}))
	defer srv.Close()
	fray := throughFray(t, srv.URL, "legacy-sse")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := scripted.RunLegacyClient(ctx, fray, 2)
	if err != nil {
		t.Fatal(err)
	}
	if res.Completed != 2 || res.Sessions != 1 {
		t.Errorf("result %+v, want 2 calls in one session", res)
	}
}

// throughFray serves fray in front of upstream under a built-in profile
// until the test ends, and returns its URL.
func throughFray(t *testing.T, upstream, profile string) string {
	t.Helper()
	prof, err := profiles.Resolve(profile)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(upstream)
	eng, err := proxy.New(proxy.Options{Upstream: u, Profile: prof})
	if err != nil {
		t.Fatal(err)
	}
	fray := httptest.NewServer(eng.Handler())
	t.Cleanup(fray.Close)
	return fray.URL
}
