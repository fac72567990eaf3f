package forward_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
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
