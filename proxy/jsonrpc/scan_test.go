package jsonrpc

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/frayproxy/fray/proxy/mcp"
)

// want is what a table test expects of a Message; string fields use "-"
// for "absent" so that the empty string can be told apart from nil.
type want struct {
	kind                      mcp.RPCKind
	method, id                string
	params, result, errSpan   string
	version, batch, escMethod bool
	count                     int
}

func span(b []byte) string {
	if b == nil {
		return "-"
	}
	return string(b)
}

func check(t *testing.T, got Message, w want) {
	t.Helper()
	if got.Kind != w.kind {
		t.Errorf("Kind = %v, want %v", got.Kind, w.kind)
	}
	for _, f := range []struct{ name, got, want string }{
		{"Method", span(got.Method), w.method},
		{"ID", span(got.ID), w.id},
		{"Params", span(got.Params), w.params},
		{"Result", span(got.Result), w.result},
		{"Error", span(got.Error), w.errSpan},
	} {
		if f.want == "" {
			f.want = "-"
		}
		if f.got != f.want {
			t.Errorf("%s = %q, want %q", f.name, f.got, f.want)
		}
	}
	if got.Version != w.version || got.Batch != w.batch || got.MethodEscaped != w.escMethod || got.Count != w.count {
		t.Errorf("Version, Batch, MethodEscaped, Count = %v, %v, %v, %d; want %v, %v, %v, %d",
			got.Version, got.Batch, got.MethodEscaped, got.Count, w.version, w.batch, w.escMethod, w.count)
	}
}

func TestScan(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want want
	}{
		{"request number id", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`,
			want{kind: mcp.RPCRequest, method: "tools/call", id: "1", params: `{"name":"x"}`, version: true, count: 1}},
		{"request string id", `{"jsonrpc":"2.0","id":"abc-1","method":"ping"}`,
			want{kind: mcp.RPCRequest, method: "ping", id: `"abc-1"`, version: true, count: 1}},
		{"request null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`,
			want{kind: mcp.RPCRequest, method: "ping", id: "null", version: true, count: 1}},
		{"request negative float id", `{"id":-1.5e3,"method":"m"}`,
			want{kind: mcp.RPCRequest, method: "m", id: "-1.5e3", count: 1}},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1}}`,
			want{kind: mcp.RPCNotification, method: "notifications/progress", params: `{"progressToken":7,"progress":1}`, version: true, count: 1}},
		{"response", `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"hi"}]}}`,
			want{kind: mcp.RPCResponse, id: "3", result: `{"content":[{"type":"text","text":"hi"}]}`, version: true, count: 1}},
		{"response null result", `{"id":3,"result":null}`,
			want{kind: mcp.RPCResponse, id: "3", result: "null", count: 1}},
		{"error", `{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"nope"}}`,
			want{kind: mcp.RPCError, id: `"x"`, errSpan: `{"code":-32601,"message":"nope"}`, version: true, count: 1}},
		{"error wins over result", `{"id":1,"result":1,"error":{}}`,
			want{kind: mcp.RPCError, id: "1", result: "1", errSpan: "{}", count: 1}},
		{"error with null id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}`,
			want{kind: mcp.RPCError, id: "null", errSpan: `{"code":-32700,"message":"parse"}`, version: true, count: 1}},
		{"whitespace everywhere", " \t\r\n{ \"jsonrpc\" :\t\"2.0\" ,\n\"id\"\r: 42 , \"method\" : \"a/b\" , \"params\" : [ 1 , { } ] }\n\n",
			want{kind: mcp.RPCRequest, method: "a/b", id: "42", params: "[ 1 , { } ]", version: true, count: 1}},
		{"member order", `{"params":{},"method":"m","id":9,"jsonrpc":"2.0"}`,
			want{kind: mcp.RPCRequest, method: "m", id: "9", params: "{}", version: true, count: 1}},
		{"method in escaped string is not a key", `{"id":1,"result":"\"method\":\"evil\"","x":"\\\"method\\\""}`,
			want{kind: mcp.RPCResponse, id: "1", result: `"\"method\":\"evil\""`, count: 1}},
		{"nested method is not top-level", `{"id":1,"result":{"method":"inner","id":2,"params":{"method":"deeper"}}}`,
			want{kind: mcp.RPCResponse, id: "1", result: `{"method":"inner","id":2,"params":{"method":"deeper"}}`, count: 1}},
		{"nested method in params", `{"method":"outer","params":{"method":"inner","id":5}}`,
			want{kind: mcp.RPCNotification, method: "outer", params: `{"method":"inner","id":5}`, count: 1}},
		{"nested method in array", `{"id":1,"result":[{"method":"a"},["method","b"]]}`,
			want{kind: mcp.RPCResponse, id: "1", result: `[{"method":"a"},["method","b"]]`, count: 1}},
		{"escaped key", `{"\u006dethod":"m","\u0069d":1}`,
			want{kind: mcp.RPCRequest, method: "m", id: "1", count: 1}},
		{"escaped method", `{"method":"tools\/call"}`,
			want{kind: mcp.RPCNotification, method: `tools\/call`, escMethod: true, count: 1}},
		{"duplicate keys: last wins", `{"method":"a","method":"b","id":1,"id":2}`,
			want{kind: mcp.RPCRequest, method: "b", id: "2", count: 1}},
		{"duplicate method: last not a string", `{"method":"a","method":1}`,
			want{kind: mcp.RPCNone, count: 1}},
		{"non-string method", `{"method":5,"id":1}`,
			want{kind: mcp.RPCNone, id: "1", count: 1}},
		{"object id", `{"id":{},"result":1}`,
			want{kind: mcp.RPCNone, id: "{}", result: "1", count: 1}},
		{"bool id", `{"id":true,"method":"m"}`,
			want{kind: mcp.RPCNone, method: "m", id: "true", count: 1}},
		{"id only", `{"id":1}`, want{kind: mcp.RPCNone, id: "1", count: 1}},
		{"wrong version", `{"jsonrpc":"1.0","method":"m"}`,
			want{kind: mcp.RPCNotification, method: "m", count: 1}},
		{"escaped version", `{"jsonrpc":"\u0032.0","method":"m"}`,
			want{kind: mcp.RPCNotification, method: "m", version: true, count: 1}},
		{"empty object", `{}`, want{count: 1}},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"},{"id":2,"result":{}}]`,
			want{kind: mcp.RPCRequest, method: "a", id: "1", version: true, batch: true, count: 3}},
		{"batch with whitespace", " [ {\"method\":\"n\"} , 1 ] ",
			want{kind: mcp.RPCNotification, method: "n", batch: true, count: 2}},
		{"batch first not object", `[1,{"method":"n"}]`, want{batch: true, count: 2}},
		{"empty batch", `[]`, want{batch: true}},
		{"deep nesting", `{"id":1,"result":` + strings.Repeat("[", 500) + strings.Repeat("]", 500) + `}`,
			want{kind: mcp.RPCResponse, id: "1", result: strings.Repeat("[", 500) + strings.Repeat("]", 500), count: 1}},
		{"unicode", `{"method":"héllo","params":{"t":"日本\ud83d\ude00"}}`,
			want{kind: mcp.RPCNotification, method: "héllo", escMethod: true, params: `{"t":"日本\ud83d\ude00"}`, count: 1}},

		// Not JSON-RPC, or not JSON: the zero Message.
		{"empty", ``, want{}},
		{"spaces", "  \n", want{}},
		{"number", `1`, want{}},
		{"string", `"method"`, want{}},
		{"null", `null`, want{}},
		{"garbage", `hello`, want{}},
		{"garbage after space", ` A`, want{}},
		{"truncated object", `{"jsonrpc":"2.0","id":1,"method":"to`, want{}},
		{"truncated after value", `{"id":1`, want{}},
		{"truncated nested", `{"id":1,"result":{"a":[1,2`, want{}},
		{"truncated escape", `{"method":"a\`, want{}},
		{"truncated unicode escape", `{"method":"\u00`, want{}},
		{"truncated batch", `[{"method":"a"},`, want{}},
		{"trailing garbage", `{"method":"a"}x`, want{}},
		{"two objects", `{"method":"a"}{"method":"b"}`, want{}},
		{"trailing comma", `{"method":"a",}`, want{}},
		{"trailing comma nested", `{"id":1,"result":[1,]}`, want{}},
		{"trailing comma batch", `[{"method":"a"},]`, want{}},
		{"missing colon", `{"method" "a"}`, want{}},
		{"unquoted key", `{method:"a"}`, want{}},
		{"single quotes", `{'method':'a'}`, want{}},
		{"bad escape", `{"method":"\x"}`, want{}},
		{"bad unicode escape", `{"method":"\u12g4"}`, want{}},
		{"control char in string", "{\"method\":\"a\nb\"}", want{}},
		{"leading zero", `{"id":01,"result":1}`, want{}},
		{"bare minus", `{"id":-,"result":1}`, want{}},
		{"bad fraction", `{"id":1.,"result":1}`, want{}},
		{"bad exponent", `{"id":1e,"result":1}`, want{}},
		{"plus sign", `{"id":+1,"result":1}`, want{}},
		{"bad literal", `{"id":1,"result":nul}`, want{}},
		{"mismatched brackets", `{"id":1,"result":[}]}`, want{}},
		{"key in array", `{"id":1,"result":["a":1]}`, want{}},
		{"bom", "\ufeff{\"method\":\"a\"}", want{}},
		// The top-level object counts as one level, like encoding/json does.
		{"max depth", `{"id":1,"result":` + strings.Repeat("[", maxDepth-1) + strings.Repeat("]", maxDepth-1) + `}`,
			want{kind: mcp.RPCResponse, id: "1", result: strings.Repeat("[", maxDepth-1) + strings.Repeat("]", maxDepth-1), count: 1}},
		{"too deep", `{"id":1,"result":` + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth) + `}`, want{}},
		{"nul byte", "{\"method\":\"a\"}\x00", want{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check(t, Scan([]byte(tt.in)), tt.want)
		})
	}
}

func TestScanRaw(t *testing.T) {
	in := " \n{\"method\":\"a\"} \n"
	if got := string(Scan([]byte(in)).Raw); got != `{"method":"a"}` {
		t.Errorf("Raw = %q", got)
	}
	in = ` [ {"method":"a"} , {"method":"b"} ] `
	if got := string(Scan([]byte(in)).Raw); got != `{"method":"a"}` {
		t.Errorf("batch Raw = %q", got)
	}
}

func TestScanBatch(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		stop  int // fn returns false on this call (1-based); 0 never
		kinds []mcp.RPCKind
		raws  []string
	}{
		{"single", `{"id":1,"method":"a"}`, 0,
			[]mcp.RPCKind{mcp.RPCRequest}, []string{`{"id":1,"method":"a"}`}},
		{"batch", ` [{"id":1,"method":"a"}, {"method":"b"},{"id":1,"result":2} , 7] `, 0,
			[]mcp.RPCKind{mcp.RPCRequest, mcp.RPCNotification, mcp.RPCResponse, mcp.RPCNone},
			[]string{`{"id":1,"method":"a"}`, `{"method":"b"}`, `{"id":1,"result":2}`, `7`}},
		{"stop early", `[{"method":"a"},{"method":"b"},{"method":"c"}]`, 2,
			[]mcp.RPCKind{mcp.RPCNotification, mcp.RPCNotification},
			[]string{`{"method":"a"}`, `{"method":"b"}`}},
		{"empty batch", `[]`, 0, nil, nil},
		{"scalar", `"x"`, 0, []mcp.RPCKind{mcp.RPCNone}, []string{`"x"`}},
		{"invalid batch calls nothing", `[{"method":"a"},{"method":"b"`, 0, nil, nil},
		{"invalid object calls nothing", `{"method":"a"`, 0, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var kinds []mcp.RPCKind
			var raws []string
			ScanBatch([]byte(tt.in), func(m Message) bool {
				if m.Batch {
					t.Errorf("element %d has Batch set", len(kinds))
				}
				kinds = append(kinds, m.Kind)
				raws = append(raws, string(m.Raw))
				return len(kinds) != tt.stop
			})
			if !slices.Equal(kinds, tt.kinds) || !slices.Equal(raws, tt.raws) {
				t.Errorf("got %v %q, want %v %q", kinds, raws, tt.kinds, tt.raws)
			}
		})
	}
}

func TestMethod(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{`{"method":"tools/call"}`, "tools/call"},
		{`{"method":"tools\/call"}`, "tools/call"},
		{`{"method":"\u0074ools/call"}`, "tools/call"},
		{`{"method":"a\"b\\c\n"}`, "a\"b\\c\n"},
		{`{"method":"\ud83d\ude00"}`, "😀"},
		{`{"method":"\ud83d"}`, "\ufffd"},
		{`{"method":"\ud83dx"}`, "\ufffdx"},
		{`{"method":"\ude00\ud83d"}`, "\ufffd\ufffd"},
		{`{"method":"\ud83d\u0041"}`, "\ufffdA"},
		{"{\"method\":\"a\xffb\"}", "a\ufffdb"},
		{`{"method":""}`, ""},
	}
	for _, tt := range tests {
		m := Scan([]byte(tt.in))
		if m.Kind != mcp.RPCNotification {
			t.Errorf("%s: Kind = %v", tt.in, m.Kind)
		}
		if got := m.MethodString(); got != tt.want {
			t.Errorf("%s: MethodString() = %q, want %q", tt.in, got, tt.want)
		}
		if !m.MethodIs(tt.want) {
			t.Errorf("%s: MethodIs(%q) = false", tt.in, tt.want)
		}
		if m.MethodIs(tt.want + "x") {
			t.Errorf("%s: MethodIs(%q) = true", tt.in, tt.want+"x")
		}
	}
	var zero Message
	if zero.MethodIs("") || zero.MethodString() != "" {
		t.Error("the zero Message has a method")
	}
}

func TestLookup(t *testing.T) {
	tests := []struct {
		obj, key, want string
	}{
		{`{"a":1,"b":{"c":2}}`, "b", `{"c":2}`},
		{` { "a" : "x" } `, "a", `"x"`},
		{`{"a":1,"a":2}`, "a", "2"},
		{`{"\u0061":1}`, "a", "1"},
		{`{"a":{"b":1}}`, "b", "-"},
		{`{"a":1}`, "", "-"},
		{`{"":1}`, "", "1"},
		{`{"a":1`, "a", "-"},
		{`{"a":1} x`, "a", "-"},
		{`[{"a":1}]`, "a", "-"},
		{``, "a", "-"},
		{`{"é":1}`, "é", "1"},
	}
	for _, tt := range tests {
		if got := span(Lookup([]byte(tt.obj), tt.key)); got != tt.want {
			t.Errorf("Lookup(%s, %q) = %s, want %s", tt.obj, tt.key, got, tt.want)
		}
	}
}

func TestProgressToken(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t1","progress":3}}`, `"t1"`},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":42}}}`, "42"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`, "-"},
		{`{"jsonrpc":"2.0","method":"notifications/message","params":{"progressToken":1}}`, "-"},
		{`{"jsonrpc":"2.0","id":1,"result":{"_meta":{"progressToken":1}}}`, "-"},
		{`{"method":"notifications/progress"}`, "-"},
	}
	for _, tt := range tests {
		m := Scan([]byte(tt.in))
		if got := span(m.ProgressToken()); got != tt.want {
			t.Errorf("%s: ProgressToken() = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestProtocolVersion(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`, "2025-11-25", true},
		{`{"jsonrpc":"2.0","id":0,"result":{"capabilities":{"protocolVersion":"x"},"protocolVersion":"2024-11-05"}}`, "2024-11-05", true},
		{`{"id":0,"result":{"protocolVersion":"2025\u002d06-18"}}`, "2025-06-18", true},
		{`{"id":0,"result":{"protocolVersion":20250618}}`, "", false},
		{`{"id":0,"result":{}}`, "", false},
		{`{"id":0,"error":{"code":1,"message":"m","data":{"protocolVersion":"x"}}}`, "", false},
		{`{"id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`, "", false},
		{`{"id":0,"result":{"protocolVersion":"2025-11-25"}`, "", false},
	}
	for _, tt := range tests {
		got, ok := ProtocolVersion([]byte(tt.in))
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: ProtocolVersion() = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestNoAllocs(t *testing.T) {
	data := []byte(`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":"p"}}},{"method":"a\/b"}]`)
	n := testing.AllocsPerRun(100, func() {
		m := Scan(data)
		_ = m.ProgressToken()
		_ = m.MethodIs("tools/call")
		ScanBatch(data, func(m Message) bool { return m.MethodIs("a/b") })
	})
	if n != 0 {
		t.Errorf("%v allocations per run, want 0", n)
	}
}

// TestSkipNested: values nested around the 64 levels the skip's stack
// holds in one word, and around the nesting limit, valid or broken at the
// innermost level, are JSON to Scan exactly when they are to encoding/json.
func TestSkipNested(t *testing.T) {
	checkNested(t, []int{0, 1, 62, 63, 64, 65, 128, 129, maxDepth - 3, maxDepth - 2, maxDepth - 1},
		`"x"`, `{}`, `[]`, `{"a":[true,null,-1.5e3]}`, `"\u00e9\n"`,
		`tru`, `{"a"}`, `[1,]`, `{,}`, "\"\x01\"", `01`, `{"a":1,}`, `[1 2]`, `"\ud800"`)
}

// checkNested fails unless Scan calls each inner value, nested in arrays
// or objects to each of levels, JSON exactly when encoding/json does.
func checkNested(t *testing.T, levels []int, inners ...string) {
	t.Helper()
	nest := func(levels int, inner string, object bool) string {
		open, close := `[1,`, `]`
		if object {
			open, close = `{"k":`, `}`
		}
		return strings.Repeat(open, levels) + inner + strings.Repeat(close, levels)
	}
	for _, levels := range levels {
		for _, object := range []bool{false, true} {
			for _, inner := range inners {
				in := `{"id":1,"result":` + nest(levels, inner, object) + `}`
				got := Scan([]byte(in)).Kind != mcp.RPCNone
				if want := json.Valid([]byte(in)); got != want {
					t.Errorf("%d levels (objects %v) around %q: Scan calls it JSON %v, encoding/json %v", levels, object, inner, got, want)
				}
			}
		}
	}
}
