package forward_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy/forward"
	"github.com/frayproxy/fray/proxy/observe"
)

// TestExchangesAreClassified drives one scripted Streamable HTTP session
// through fray and checks what fray made of each exchange, as logged at
// debug level: the JSON-RPC identity of each POST, the stream types, the
// session, and the negotiated protocol revision (from a JSON initialize
// answer, and later from the header).
func TestExchangesAreClassified(t *testing.T) {
	checkNoLeaks(t)
	up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case r.Method == "POST" && strings.Contains(string(body), `"initialize"`):
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Mcp-Session-Id", "sess-abc")
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{}}}`)
		case r.Method == "POST" && strings.Contains(string(body), `"tools/call"`):
			sseHeader(w)
			writePieces(w, "id: p1\nretry: 50\ndata:\n\n",
				`id: e1`+"\n"+`data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`+"\n\n",
				`id: e2`+"\n"+`data: {"jsonrpc":"2.0","id":2,"result":{"content":[]}}`+"\n\n")
		case r.Method == "POST":
			w.WriteHeader(http.StatusAccepted)
		case r.Method == "GET":
			sseHeader(w)
		default:
			w.WriteHeader(http.StatusOK)
		}
	})
	fray, logs := front(t, up)
	send := func(method, body string, hdr map[string]string) {
		t.Helper()
		roundTrip(t, method, fray+"/mcp", body, hdr)
	}
	sess := map[string]string{"Mcp-Session-Id": "sess-abc"}
	send("POST", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`, nil)
	send("POST", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, sess)
	send("POST", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}`, sess)
	send("POST", `{"jsonrpc":"2.0","id":9,"result":{}}`, sess)
	send("POST", `[{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/cancelled"}]`, sess)
	send("GET", "", sess)
	send("GET", "", map[string]string{"Mcp-Session-Id": "sess-abc", "Last-Event-ID": "e1"})
	send("DELETE", "", sess)

	want := []map[string]string{
		{"method": "POST", "stream": "post", "rpc": "request", "rpc_method": "initialize", "rpc_id": "0"},
		{"method": "POST", "stream": "post", "rpc": "notification", "rpc_method": "notifications/initialized", "session": "1", "protocol": "2025-11-25"},
		{"method": "POST", "stream": "post", "rpc": "request", "rpc_method": "tools/call", "rpc_name": "x", "rpc_id": "2", "session": "1"},
		{"method": "POST", "stream": "post", "rpc": "response", "rpc_id": "9", "session": "1"},
		{"method": "POST", "stream": "post", "rpc": "request", "rpc_method": "ping", "rpc_id": "3", "batch": "2"},
		{"method": "GET", "stream": "get", "session": "1"},
		{"method": "GET", "stream": "resume", "session": "1", "last_event_id": "true"},
		{"method": "DELETE", "stream": "other", "session": "1"},
	}
	got := logs.find("exchange")
	if len(got) != len(want) {
		t.Fatalf("%d exchanges logged, want %d:\n%s", len(got), len(want), logs.text())
	}
	for i, w := range want {
		for k, v := range w {
			if got[i][k] != v {
				t.Errorf("exchange %d: %s = %q, want %q (all: %v)", i, k, got[i][k], v, got[i])
			}
		}
		if got[i]["level"] != "DEBUG" {
			t.Errorf("exchange %d logged at %s, want DEBUG", i, got[i]["level"])
		}
	}
	if p := logs.find("protocol negotiated"); len(p) != 1 || p[0]["protocol"] != "2025-11-25" {
		t.Errorf("protocol negotiated: %v", p)
	}
	answers := map[string]int{}
	for _, a := range logs.find("answer") {
		answers[a["answer"]]++
	}
	if answers["json"] != 1 || answers["accepted"] != 3 {
		t.Errorf("answers %v: want 1 json, 3 accepted", answers)
	}
}

// classifyingRecorder is an observer whose streams classify events, always
// ready, that notes, for each event, whether the proxy left it
// unclassified, then classifies it as a Queue does and notes its JSON-RPC
// identity.
type classifyingRecorder struct{ list[string] }

func (r *classifyingRecorder) Stream() observe.Stream {
	return classifyingStream{observe.NewStream(observe.Func(r.Observe))}
}

type classifyingStream struct{ observe.Stream }

func (classifyingStream) Classifies() bool { return true }

func (r *classifyingRecorder) Observe(o *observe.Observation) {
	if o.Kind != observe.KindEvent || !o.Event.Dispatched {
		return
	}
	left := o.Event.Unclassified
	o.Event.Classify()
	r.add(fmt.Sprintf("left=%v %s %s %s", left, o.Event.RPCKind, o.Event.RPCMethod, o.Event.RPCID))
}

// TestClassificationLeftToTheObserver: the proxy leaves the JSON-RPC
// classification of an event to an observer's Stream that classifies exactly
// when nothing on the stream's path reads it: with no profile, with one
// that has no fault (as `fray proxy --admin` runs before a swap), or with
// one no fault of which can hit the stream, but not when a fault can, nor
// for the answer to an initialize (read for the session's revision), nor
// for an observer with no Stream of its own. Either way the observer gets
// the same identity.
func TestClassificationLeftToTheObserver(t *testing.T) {
	checkNoLeaks(t)
	up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sseHeader(w)
		if strings.Contains(string(body), `"initialize"`) {
			w.Header().Set("Mcp-Session-Id", "s1")
			writePieces(w, "id: 0\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-11-25\"}}\n\n")
			return
		}
		writePieces(w,
			"id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n",
			"id: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n")
	})

	// A fault that selects no POST stream, and one that can hit the
	// tools/call stream's events (it drops the progress notification,
	// which the observer sees all the same).
	elsewhere := activeProfile(t, "late.toml", "[[fault]]\nkind = \"drop\"\nstream = \"get\"\n")
	// The profile `fray proxy --admin` keeps in force before one is
	// swapped in: none, with no fault.
	none, err := profiles.NewActive(&profiles.Profile{Name: "none"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	here := activeProfile(t, "late.toml", "[[fault]]\nkind = \"drop\"\nrpc_method = \"notifications/progress\"\n")

	call := []string{
		"left=%v notification notifications/progress ",
		"left=%v response  2",
	}
	for _, tc := range []struct {
		name      string
		opts      func(*forward.Options, *classifyingRecorder)
		body      string
		want      []string
		leftToObs bool
	}{
		{"no profile", func(o *forward.Options, r *classifyingRecorder) { o.Observer = r }, tcall, call, true},
		{"a profile with no fault", func(o *forward.Options, r *classifyingRecorder) { o.Observer, o.Faults = r, none }, tcall, call, true},
		{"no fault can hit the stream", func(o *forward.Options, r *classifyingRecorder) { o.Observer, o.Faults = r, elsewhere }, tcall, call, true},
		{"a fault can hit the stream", func(o *forward.Options, r *classifyingRecorder) { o.Observer, o.Faults = r, here }, tcall, call, false},
		{"the answer to an initialize", func(o *forward.Options, r *classifyingRecorder) { o.Observer = r },
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, []string{"left=%v response  1"}, false},
		{"an observer with no Stream of its own", func(o *forward.Options, r *classifyingRecorder) { o.Observer = observe.Func(r.Observe) }, tcall, call, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &classifyingRecorder{}
			fray, _ := front(t, up, func(o *forward.Options) { tc.opts(o, rec) })
			roundTrip(t, "POST", fray+"/mcp", tc.body, map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
			var want []string
			for _, w := range tc.want {
				want = append(want, fmt.Sprintf(w, tc.leftToObs))
			}
			if got := rec.all(); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("observer saw\n%q\nwant\n%q", got, want)
			}
		})
	}
}

const tcall = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t","_meta":{"progressToken":1}}}`
