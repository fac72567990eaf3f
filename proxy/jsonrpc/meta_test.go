package jsonrpc

import "testing"

func TestMetaMembers(t *testing.T) {
	for _, tc := range []struct {
		name, msg       string
		version, target string
		code            int
		hasCode         bool
	}{
		{"stateless call", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, "2026-07-28", "add", 0, false},
		{"escaped name", `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"\u0061b"}}`, "", "ab", 0, false},
		{"resource", `{"jsonrpc":"2.0","id":"x","method":"resources/read","params":{"uri":"file:///a"}}`, "", "file:///a", 0, false},
		{"listen", `{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"notifications":{}}}`, "2026-07-28", "", 0, false},
		{"version not a string", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":20260728}}}`, "", "", 0, false},
		{"name not a string", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}`, "", "", 0, false},
		{"mismatch error", `{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Header mismatch"}}`, "", "", -32020, true},
		{"error without code", `{"jsonrpc":"2.0","id":1,"error":{"message":"x"}}`, "", "", 0, false},
	} {
		m := Scan([]byte(tc.msg))
		if got := Unquote(m.MetaProtocolVersion()); got != tc.version {
			t.Errorf("%s: MetaProtocolVersion = %q, want %q", tc.name, got, tc.version)
		}
		if got := Unquote(m.TargetName()); got != tc.target {
			t.Errorf("%s: TargetName = %q, want %q", tc.name, got, tc.target)
		}
		if code, ok := m.ErrorCode(); code != tc.code || ok != tc.hasCode {
			t.Errorf("%s: ErrorCode = %d, %v, want %d, %v", tc.name, code, ok, tc.code, tc.hasCode)
		}
	}
}

func TestMetaMembersDoNotAllocate(t *testing.T) {
	data := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
	n := testing.AllocsPerRun(100, func() {
		m := Scan(data)
		if m.MetaProtocolVersion() == nil || m.TargetName() == nil || m.ParamsDigest() == 0 {
			t.Fatal("members not found")
		}
	})
	if n != 0 {
		t.Errorf("%v allocations per run, want 0", n)
	}
}

func TestTaskMembers(t *testing.T) {
	for _, tc := range []struct {
		name, msg string
		task      string
		poll      int64
		hasPoll   bool
	}{
		{"create task", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"task","taskId":"t-1","status":"working","pollIntervalMs":250}}`, "t-1", 250, true},
		{"embedded task", `{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"t-2","pollIntervalMs":5000}}}`, "t-2", 5000, true},
		{"tasks/get", `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"t-1"}}`, "t-1", 0, false},
		{"no poll interval", `{"jsonrpc":"2.0","id":1,"result":{"taskId":"t-3"}}`, "t-3", 0, false},
		{"a plain result", `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`, "", 0, false},
		{"a negative interval", `{"jsonrpc":"2.0","id":1,"result":{"taskId":"t","pollIntervalMs":-1}}`, "t", -1, false},
	} {
		m := Scan([]byte(tc.msg))
		if got := Unquote(m.TaskID()); got != tc.task {
			t.Errorf("%s: TaskID = %q, want %q", tc.name, got, tc.task)
		}
		if poll, ok := m.PollIntervalMs(); ok != tc.hasPoll || ok && poll != tc.poll {
			t.Errorf("%s: PollIntervalMs = %d, %v, want %d, %v", tc.name, poll, ok, tc.poll, tc.hasPoll)
		}
	}
}

func TestParamsDigest(t *testing.T) {
	digest := func(s string) uint64 { m := Scan([]byte(s)); return m.ParamsDigest() }
	a := digest(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1},"_meta":{"progressToken":"t1"}}}`)
	b := digest(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","_meta":{"progressToken":"t2"},"arguments":{"a":1}}}`)
	c := digest(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":2}}}`)
	if a == 0 || a != b {
		t.Errorf("a re-issue with a new id and _meta digests differently: %x, %x", a, b)
	}
	if a == c {
		t.Errorf("other arguments digest the same: %x", a)
	}
	if d := digest(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); d != 0 {
		t.Errorf("no params digest %x, want 0", d)
	}
}

// BenchmarkMetaMembers reads what classifying and observing a 2026-07-28
// request adds to Scan: its _meta revision, its Mcp-Name value and the
// digest of its params.
func BenchmarkMetaMembers(b *testing.B) {
	data := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{"n":1},"_meta":{"progressToken":7,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		m := Scan(data)
		if m.MetaProtocolVersion() == nil || m.TargetName() == nil || m.ParamsDigest() == 0 {
			b.Fatal("members not found")
		}
	}
}
