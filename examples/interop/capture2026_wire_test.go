package interop_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/frayproxy/fray/proxy"
	"github.com/frayproxy/fray/proxy/report"
	"github.com/frayproxy/fray/proxy/trace"
)

// metaProtocolVersion is the _meta key that carries a 2026-07-28 request's
// protocol version.
const metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"

// nameHeaderSource is where each method's Mcp-Name comes from (2026-07-28
// transports, Standard Request Headers).
var nameHeaderSource = map[string]string{"tools/call": "name", "resources/read": "uri", "prompts/get": "name"}

// rpc is the part of a JSON-RPC message the wire checks read.
type rpc struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name string         `json:"name"`
		URI  string         `json:"uri"`
		Meta map[string]any `json:"_meta"`
	} `json:"params"`
}

// checkWire2026 holds what passed between fray and the server to revision
// 2026-07-28, for every request that declares it (in its Mcp-Protocol-Version
// header or its _meta): header and _meta agree, Mcp-Method is the body's
// method and Mcp-Name its name or uri; nothing carries Mcp-Session-Id or
// Last-Event-ID; no response to such a request carries an SSE id or retry
// field; a subscriptions/listen stream begins with
// notifications/subscriptions/acknowledged. It also holds the two things
// the peers differ in, as the capture states them: the server's
// X-Accel-Buffering and the notifications the client POSTs.
func checkWire2026(t *testing.T, c capture, wire []wireExchange) {
	t.Helper()
	modern, listens := 0, 0
	var notes []string
	for i, ex := range wire {
		at := func(format string, args ...any) {
			t.Helper()
			t.Errorf("exchange %d (%s %s): "+format, append([]any{i + 1, ex.Method, ex.Path}, args...)...)
		}
		if ex.RequestHeader.Get("Mcp-Session-Id") != "" || ex.ResponseHeader.Get("Mcp-Session-Id") != "" {
			at("Mcp-Session-Id on the wire: %q / %q", ex.RequestHeader.Get("Mcp-Session-Id"), ex.ResponseHeader.Get("Mcp-Session-Id"))
		}
		if ex.RequestHeader.Get("Last-Event-ID") != "" {
			at("Last-Event-ID %q", ex.RequestHeader.Get("Last-Event-ID"))
		}
		var msg rpc
		_ = json.Unmarshal(ex.RequestBody, &msg)
		header := ex.RequestHeader.Get("Mcp-Protocol-Version")
		meta, _ := msg.Params.Meta[metaProtocolVersion].(string)
		if header != era2026 && meta != era2026 {
			continue
		}
		if ex.Method != http.MethodPost {
			at("a 2026-07-28 request that is not a POST")
		}
		if len(msg.ID) == 0 { // a notification: no header rules
			notes = append(notes, msg.Method)
			continue
		}
		modern++
		if header != meta {
			at("Mcp-Protocol-Version %q, _meta %s %q", header, metaProtocolVersion, meta)
		}
		if got := ex.RequestHeader.Get("Mcp-Method"); got != msg.Method {
			at("Mcp-Method %q, body method %q", got, msg.Method)
		}
		if src, ok := nameHeaderSource[msg.Method]; ok {
			want := msg.Params.Name
			if src == "uri" {
				want = msg.Params.URI
			}
			if got := ex.RequestHeader.Get("Mcp-Name"); got != want {
				at("Mcp-Name %q, body %s %q", got, src, want)
			}
		}
		if ex.Status != http.StatusOK {
			continue // an error answer: what it says is the verdict's business
		}
		if !strings.HasPrefix(ex.ResponseHeader.Get("Content-Type"), "text/event-stream") {
			continue
		}
		if got := ex.ResponseHeader.Get("X-Accel-Buffering"); got != c.accel {
			at("X-Accel-Buffering %q, the capture says %q", got, c.accel)
		}
		for _, line := range strings.Split(ex.ResponseBody, "\n") {
			if strings.HasPrefix(line, "id:") || strings.HasPrefix(line, "retry:") {
				at("SSE field %q on a stream that cannot be resumed", line)
			}
		}
		if msg.Method == "subscriptions/listen" {
			listens++
			if first := firstSSEData(ex.ResponseBody); !strings.Contains(first, `"notifications/subscriptions/acknowledged"`) {
				at("the listen stream begins with %s, not notifications/subscriptions/acknowledged", first)
			}
		}
	}
	if modern == 0 {
		t.Errorf("no 2026-07-28 request on the wire")
	}
	if !slices.Equal(notes, c.notifications) {
		t.Errorf("the client POSTed notifications %q, the capture says %q", notes, c.notifications)
	}
	t.Logf("%d 2026-07-28 requests, %d listen streams, notifications %q", modern, listens, notes)
}

// firstSSEData is the data of the first SSE event in body.
func firstSSEData(body string) string {
	for _, line := range strings.Split(body, "\n") {
		if d, ok := strings.CutPrefix(line, "data:"); ok {
			return strings.TrimSpace(d)
		}
	}
	return ""
}

// checkTraceFile judges a kept trace as `fray check` does.
func checkTraceFile(t *testing.T, path string) report.Report {
	t.Helper()
	rd, err := trace.Open(path, trace.ReadOptions{})
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer rd.Close()
	rep, _, err := proxy.Check(rd)
	if err != nil {
		t.Fatalf("check %s: %v", path, err)
	}
	return rep
}
