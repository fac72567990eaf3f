package proxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/examples/scripted"
	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/report"
)

// scriptedRun runs the scripted client against the scripted server
// through an engine under prof, within 20 s, and returns the engine's
// final report and what the client returned.
func scriptedRun(t *testing.T, prof *profiles.Profile, server scripted.ServerOptions, client scripted.ClientOptions) (report.Report, *scripted.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	up := httptest.NewServer(scripted.NewServer(server))
	defer up.Close()
	eng := newEngine(t, up.URL, Options{Profile: prof})
	fray := httptest.NewServer(eng.Handler())
	defer fray.Close()
	client.URL = fray.URL + "/mcp"
	res, cerr := scripted.RunClient(ctx, client)
	eng.Wait(ctx, true)
	r, err := eng.Finish(eng.Stop(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return r, res, cerr
}

// resumingClients are the clients a cut stream is tried on: one that
// resumes with Last-Event-ID, and one that resumes without it, with the
// check that names it (want; "" for a pass).
var resumingClients = []struct {
	name   string
	client scripted.ClientFault
	want   string
}{
	{"a correct client", scripted.ClientCorrect, ""},
	{"a client without Last-Event-ID", scripted.NoLastEventID, checks.ClientLastEventID},
}

// TestIdleCutEndToEnd runs the idle cutter with a short silence against a
// server whose tool works in long silences: every answer stream, and every
// resumption, is cut when it falls silent. A client that resumes with
// Last-Event-ID gets every call through and the run passes, the cuts never
// held against the server; one that resumes without it is named.
func TestIdleCutEndToEnd(t *testing.T) {
	prof, err := profiles.Parse("idle.toml", strings.NewReader(`name = "idle"
[[fault]]
kind = "idle-close"
stream = ["post", "resume"]
silence = "150ms"
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range resumingClients {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, res, cerr := scriptedRun(t, prof, scripted.ServerOptions{Steps: 2, Interval: 400 * time.Millisecond},
				scripted.ClientOptions{Calls: 1, Fault: tc.client, MaxAttempts: 10, Idle: 2 * time.Second, CallTimeout: 4 * time.Second})
			// The correct client's resumptions are cut too; the other's GET
			// without Last-Event-ID is no resumption.
			if n := faultCount(r, "idle-close"); n < 1 || tc.want == "" && n < 2 {
				t.Fatalf("idle-close fired %d times, want the answer stream (and, resumed, the resumption) cut", n)
			}
			var found []string
			for _, c := range r.Checks {
				if c.Count > 0 && !strings.HasPrefix(c.ID, "e2e.") {
					found = append(found, c.ID)
				}
			}
			switch {
			case tc.want == "" && (cerr != nil || r.Verdict != report.VerdictPass || len(found) > 0):
				t.Errorf("client %v (%+v), verdict %s (%s), findings %v; want every call through and a pass", cerr, res, r.Verdict, r.Why, found)
			case tc.want != "" && strings.Join(found, ",") != tc.want:
				t.Errorf("findings %v, want %s alone", found, tc.want)
			}
		})
	}
}

// TestCutsOverHTTP2: over HTTP/2, cut-fin ends the tools/call stream with
// END_STREAM (a clean end after the priming event) and cut-rst with an
// RST_STREAM; either way the connection lives on for the next request.
func TestCutsOverHTTP2(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: p1\ndata: \n\nid: p2\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n"+
			"id: p3\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
	}))
	defer up.Close()
	for name, wantErr := range map[string]string{"cut-fin": "", "cut-rst": "INTERNAL_ERROR"} {
		t.Run(name, func(t *testing.T) {
			prof, err := profiles.Builtin(name)
			if err != nil {
				t.Fatal(err)
			}
			eng := newEngine(t, up.URL, Options{Profile: prof})
			fray, client := h2Front(t, eng)
			var conns []string
			for range 2 {
				req := newReq(t, http.MethodPost, fray.URL+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`,
					map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
				var remote string
				req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
					GotConn: func(i httptrace.GotConnInfo) { remote = i.Conn.LocalAddr().String() },
				}))
				resp := do(t, client, req)
				if resp.ProtoMajor != 2 {
					t.Fatalf("the client got %s, want HTTP/2", resp.Proto)
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				switch {
				case wantErr == "" && (err != nil || string(body) != "id: p1\ndata: \n\n"):
					t.Errorf("got %q, %v; want the priming event and a clean end", body, err)
				case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
					t.Errorf("the stream ended with %v, want an RST_STREAM (%s)", err, wantErr)
				}
				conns = append(conns, remote)
			}
			if conns[0] != conns[1] {
				t.Errorf("the second request came on connection %s, the first on %s: the cut took the connection down", conns[1], conns[0])
			}
			if _, err := eng.Finish(eng.Stop(), nil); err != nil {
				t.Fatal(err)
			}
		})
	}
}
