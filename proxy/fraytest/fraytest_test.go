package fraytest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/frayproxy/fray/examples/scripted"
	"github.com/frayproxy/fray/proxy"
	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/fraytest"
	"github.com/frayproxy/fray/proxy/trace"
)

// recorder stands for the testing.TB of a test under test: it keeps what
// would have failed it, and runs its cleanups when told.
type recorder struct {
	testing.TB
	mu       sync.Mutex
	errors   []string
	cleanups []func()
}

func (r *recorder) Error(args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprint(args...))
}

func (r *recorder) Errorf(format string, args ...any) { r.Error(fmt.Sprintf(format, args...)) }

func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }

// end runs the cleanups as the end of the test would, and returns what
// failed it.
func (r *recorder) end() string {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
	return strings.Join(r.errors, "\n")
}

// TestStartJudgesTheRun: through Start, a correct pair passes the test and
// a server that replays another stream's event into a resumption fails it,
// with the check, the evidence and the fault that set it up in the output.
func TestStartJudgesTheRun(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault scripted.ServerFault
		want  []string // in the test's failure output; nil: it passes
	}{
		{"correct pair", scripted.ServerCorrect, nil},
		{"foreign replay", scripted.ReplayForeign, []string{"FAIL " + checks.ServerReplayIsolated, "belongs to another stream of the session", "after fault 1 (close)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			srv := httptest.NewServer(scripted.NewServer(scripted.ServerOptions{Fault: tc.fault}))
			defer srv.Close()
			rec := &recorder{TB: t}
			f := fraytest.Start(rec, srv.URL+"/mcp", fraytest.Profile("polling-server"))
			res, err := scripted.RunClient(ctx, scripted.ClientOptions{URL: f.URL, Calls: 3})
			if err != nil && tc.want == nil {
				t.Fatalf("client: %v", err)
			}
			if res != nil && len(res.Resumes) == 0 {
				t.Fatal("the client never resumed: the profile cut nothing")
			}
			out := rec.end()
			if tc.want == nil && out != "" {
				t.Errorf("a correct pair failed the test:\n%s", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("the failure output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// TestSwapAndExpectFailures: a test can swap the profile while it runs
// and say which checks it expects to fail; the report lists the swap.
func TestSwapAndExpectFailures(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	srv := httptest.NewServer(scripted.NewServer(scripted.ServerOptions{Fault: scripted.ReplayForeign}))
	defer srv.Close()
	rec := &recorder{TB: t}
	f := fraytest.Start(rec, srv.URL+"/mcp", fraytest.ExpectFailures(checks.ServerReplayIsolated))
	if _, err := scripted.RunClient(ctx, scripted.ClientOptions{URL: f.URL, Calls: 1}); err != nil {
		t.Fatalf("client before the swap: %v", err)
	}
	if err := f.Swap("polling-server"); err != nil {
		t.Fatal(err)
	}
	_, _ = scripted.RunClient(ctx, scripted.ClientOptions{URL: f.URL, Calls: 2})
	if out := rec.end(); out != "" {
		t.Errorf("the expected failure failed the test:\n%s", out)
	}
	r, _ := f.Close()
	if r.Profile != "polling-server" || len(r.Changes) != 1 {
		t.Errorf("report: profile %q, changes %+v; want polling-server and one swap", r.Profile, r.Changes)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	for _, tc := range []struct {
		name     string
		upstream string
		opts     []fraytest.Option
		want     string
	}{
		{"no scheme", "127.0.0.1:3000/mcp", nil, "scheme"},
		{"unknown profile", "http://127.0.0.1:1/mcp", []fraytest.Option{fraytest.Profile("polling-sever")}, "polling-server"},
		{"unknown check", "http://127.0.0.1:1/mcp", []fraytest.Option{fraytest.Severity("client.retry-honored", checks.Off)}, "client.retry-honored"},
		{"bad toml", "http://127.0.0.1:1/mcp", []fraytest.Option{fraytest.ProfileTOML("[[fault]]\nkind = \"drp\"\n")}, "drp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := fraytest.New(tc.upstream, tc.opts...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New: %v, want an error naming %q", err, tc.want)
			}
		})
	}
}

// TestTraceAndSettle: Trace records the run to a file that fray check
// judges as the live run was judged; Settle bounds how long Close waits
// for a stream the client left open, which fray then ends.
func TestTraceAndSettle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	mux := http.NewServeMux()
	mux.Handle("/mcp", scripted.NewServer(scripted.ServerOptions{}))
	mux.HandleFunc("GET /hold", func(w http.ResponseWriter, r *http.Request) {
		// An event stream that stays open until its client or fray ends it.
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, ": open\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "run.jsonl")
	f, err := fraytest.New(srv.URL+"/mcp", fraytest.Profile("polling-server"), fraytest.Trace(path), fraytest.Settle(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := scripted.RunClient(ctx, scripted.ClientOptions{URL: f.URL, Calls: 1}); err != nil {
		t.Fatalf("client: %v", err)
	}
	// An event stream the client never closes.
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(f.URL, "/mcp")+"/hold", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, resp.Body)
		ended <- err
	}()
	begun := time.Now()
	live, err := f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(begun); took > time.Second {
		t.Errorf("Close took %v with Settle(100ms), want well under the default 2s", took)
	}
	select {
	case <-ended:
	case <-ctx.Done():
		t.Fatal("the open stream was not ended by Close")
	}
	rd, err := trace.Open(path, trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if h := rd.Header(); h.Profile != "polling-server" || h.Seed != 1 {
		t.Errorf("trace header: profile %q seed %d, want polling-server 1", h.Profile, h.Seed)
	}
	offline, _, err := proxy.Check(rd)
	if err != nil {
		t.Fatal(err)
	}
	if offline.Verdict != live.Verdict || offline.Totals.Exchanges != live.Totals.Exchanges || offline.Totals.Exchanges == 0 {
		t.Errorf("fray check of the trace: %s with %d exchanges; the live run: %s with %d", offline.Verdict, offline.Totals.Exchanges, live.Verdict, live.Totals.Exchanges)
	}
}
