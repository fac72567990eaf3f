package proxy

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/forward"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/report"
)

// liveHeap is the heap in use after a collection.
func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// boundedEngine serves an engine as fray proxy assembles it (the verifier
// attached) in front of up, and returns it, its URL, and a function that
// stops it and returns its final report; it is stopped when the test ends
// at the latest.
func boundedEngine(t *testing.T, up *httptest.Server) (*Engine, string, func() report.Report) {
	t.Helper()
	u, _ := url.Parse(up.URL)
	eng := newEngine(t, up.URL, ProxyOptions(ProxyCommand{Upstream: u}))
	ctx, cancel := context.WithCancel(context.Background())
	base, _, done := serveEngine(t, ctx, ctx, eng)
	var once sync.Once
	var r report.Report
	finish := func() report.Report {
		once.Do(func() {
			cancel()
			st := <-done
			var err error
			if r, err = eng.Finish(st, nil); err != nil {
				t.Error(err)
			}
		})
		return r
	}
	t.Cleanup(func() { finish() })
	return eng, base, finish
}

// The bounds docs/security.md states for what the verifier keeps of ids.
const (
	// eventIDHeapBound: a stream of 500,000-byte event ids.
	eventIDHeapBound = 16 << 20
	// sessionIDHeapBound: 300 sessions whose ids, issued by the server,
	// are 60,000 bytes, or 2 MB (refused at the response head bound).
	sessionIDHeapBound = 16 << 20
)

// TestHostileEventIDsBounded: an upstream that sends events with
// 500,000-byte ids, as fast as fray passes them on, for up to 3 s or 300
// events, grows the heap of an engine as fray proxy runs it (verifier
// attached) by less than eventIDHeapBound, kept while its session lives:
// the verifier keeps an id over observe.MaxIDKey by its digest.
func TestHostileEventIDsBounded(t *testing.T) {
	const events, idLen = 300, 500_000
	pad := strings.Repeat("i", idLen-8)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for i := range events {
			if r.Context().Err() != nil {
				return
			}
			fmt.Fprintf(w, "id: %08d%s\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n", i, pad)
			w.(http.Flusher).Flush()
		}
	}))
	defer up.Close()
	eng, fray, _ := boundedEngine(t, up)
	before := liveHeap()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	req := newReq(t, http.MethodGet, fray+"/mcp", "",
		map[string]string{"Accept": "text/event-stream", mcp.HeaderSession: "s-1"})
	resp := do(t, http.DefaultClient, req.WithContext(ctx))
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	seen := eng.Live().Events
	grown := liveHeap() - before
	t.Logf("%d events of %d-byte ids (%d MiB through fray): the live heap grew %d KiB", seen, idLen, n>>20, grown>>10)
	if seen < 50 {
		t.Fatalf("only %d events went through; the test measured nothing", seen)
	}
	if grown > eventIDHeapBound {
		t.Errorf("the live heap grew %d MiB, over the bound of %d MiB", grown>>20, eventIDHeapBound>>20)
	}
}

// TestHostileSessionIDsBounded: 300 sessions whose ids, issued by the
// server in its answers to initialize, are 60,000 bytes each, then 300
// whose ids are 2 MB, grow the heap of an engine as fray proxy runs it by
// less than sessionIDHeapBound while the sessions live. The 2 MB ones
// pass the bound on a response head: the client gets 502 saying so.
func TestHostileSessionIDsBounded(t *testing.T) {
	const sessions = 300
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(mcp.HeaderSession) == "" {
			size := 60_000
			if strings.HasPrefix(r.URL.Path, "/huge") {
				size = 2_000_000
			}
			w.Header().Set(mcp.HeaderSession, r.URL.Path[len(r.URL.Path)-8:]+strings.Repeat("s", size-8))
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`)
	}))
	defer up.Close()
	eng, fray, _ := boundedEngine(t, up)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}, Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	post := func(path, session string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, fray+path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set(mcp.HeaderSession, session)
		}
		resp := do(t, client, req)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	before := liveHeap()
	for i := range sessions {
		resp, _ := post(fmt.Sprintf("/mcp/%08d", i), "")
		sid := resp.Header.Get(mcp.HeaderSession)
		if resp.StatusCode != http.StatusOK || len(sid) != 60_000 {
			t.Fatalf("session %d: %d, an id of %d bytes", i, resp.StatusCode, len(sid))
		}
		if resp, _ := post("/mcp/next", sid); resp.StatusCode != http.StatusOK {
			t.Fatalf("session %d, second request: %d", i, resp.StatusCode)
		}
	}
	for i := range sessions {
		resp, body := post(fmt.Sprintf("/huge/%08d", i), "")
		if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, fmt.Sprintf("exceeded %d bytes", forward.MaxResponseHead)) {
			t.Fatalf("huge session %d: %d %q, want 502 naming the bound", i, resp.StatusCode, body)
		}
	}
	client.CloseIdleConnections()
	grown := liveHeap() - before
	t.Logf("%d sessions of 60,000-byte ids and %d of 2 MB ids (%d exchanges): the live heap grew %d KiB", sessions, sessions, eng.Live().Exchanges, grown>>10)
	if grown > sessionIDHeapBound {
		t.Errorf("the live heap grew %d MiB, over the bound of %d MiB", grown>>20, sessionIDHeapBound>>20)
	}
}

// TestLargeAnswersJudged: a 1.5 MB tool result, as a JSON body (past the
// 1 MiB fray reads of one) or as an SSE event (past --max-block), reaches
// the client whole, and the verdict does not hold it unanswered: the
// request is excused as an answer fray did not read whole, and the
// summary says so.
func TestLargeAnswersJudged(t *testing.T) {
	text := strings.Repeat("r", 1_500_000)
	answer := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + text + `"}]}}`
	for _, sse := range []bool{false, true} {
		t.Run(map[bool]string{false: "json", true: "sse"}[sse], func(t *testing.T) {
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				if !sse {
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, answer)
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, "id: 1\ndata: "+answer+"\n\n")
			}))
			defer up.Close()
			_, fray, finish := boundedEngine(t, up)
			req := newReq(t, http.MethodPost, fray+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"big"}}`,
				map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
			resp := do(t, http.DefaultClient, req)
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || !strings.Contains(string(body), answer) {
				t.Fatalf("the client got %d bytes (%v), not the whole answer", len(body), err)
			}
			r := finish()
			var answered *report.Check
			for i := range r.Checks {
				if r.Checks[i].ID == checks.E2EEveryRequestAnswered {
					answered = &r.Checks[i]
				}
			}
			if answered == nil || answered.Status == report.StatusFail || answered.Count != 0 {
				t.Fatalf("every-request-answered: %+v; want no finding", answered)
			}
			excused := 0
			for _, e := range answered.Excused {
				if strings.HasPrefix(e.Reason, report.BoundReached) && strings.Contains(e.Reason, "did not read whole") {
					excused += e.Count
				}
			}
			if excused != 1 {
				t.Errorf("excused %+v; want the request once, as an answer fray did not read whole", answered.Excused)
			}
			if r.Verdict == report.VerdictFail {
				t.Errorf("verdict %s: %s", r.Verdict, r.Why)
			}
			var out strings.Builder
			_ = report.WriteSummary(&out, r, report.SummaryOptions{})
			if !strings.Contains(out.String(), "did not read whole") {
				t.Errorf("the summary does not say fray did not read the answer whole:\n%s", out.String())
			}
		})
	}
}
