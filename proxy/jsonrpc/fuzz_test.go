package jsonrpc

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/frayproxy/fray/proxy/mcp"
)

// FuzzScan checks Scan, ScanBatch, Lookup and ProtocolVersion against
// encoding/json: they must call the same documents JSON, find the same
// members, and never panic.
func FuzzScan(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"method":"x"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`,
		`{"jsonrpc":"2.0","id":"a","result":{"protocolVersion":"2025-11-25"}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`,
		`[{"id":1,"method":"a"},{"method":"b"},3]`,
		`{"\u006dethod":"\ud83d\ude00","id":-0.5e+7}`,
		`{"method":"a","method":1}`,
		`{"id":1,"result":[[[{"a":"\"method\""}]]]}`,
		`{"id":1,"result":tru}`,
		"{\"method\":\"a\xffb\"}",
		`{"jsonrpc":"2.0","id":1,"result":{},"error":null,"params":[],"method":"m"}`,
		`{"id" :1,"jsonrpc": "2.0","error" :{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(checkScan)
}

// checkScan fails unless Scan, ScanBatch, Lookup and ProtocolVersion see
// data as encoding/json does.
func checkScan(t *testing.T, data []byte) {
	t.Helper()
	got := Scan(data)
	batch := scanAll(data)
	if !json.Valid(data) {
		if !reflect.DeepEqual(got, Message{}) {
			t.Fatalf("encoding/json rejects %q, Scan gives %+v", data, got)
		}
		if len(batch) != 0 {
			t.Fatalf("encoding/json rejects %q, ScanBatch calls fn %d times", data, len(batch))
		}
		return
	}
	var raw json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	switch raw[0] {
	case '{':
		compare(t, got, raw)
		if got.Batch || got.Count != 1 || len(batch) != 1 {
			t.Fatalf("%q: Batch %v, Count %d, %d ScanBatch calls; want false, 1, 1", data, got.Batch, got.Count, len(batch))
		}
		compare(t, batch[0], raw)
		compareLookup(t, data, raw)
	case '[':
		var elems []json.RawMessage
		if err := json.Unmarshal(raw, &elems); err != nil {
			t.Fatal(err)
		}
		if !got.Batch || got.Count != len(elems) || len(batch) != len(elems) {
			t.Fatalf("%q: Batch %v, Count %d, %d ScanBatch calls; want true, %d, %d", data, got.Batch, got.Count, len(batch), len(elems), len(elems))
		}
		for i, e := range elems {
			compareElement(t, batch[i], e)
		}
		if len(elems) > 0 {
			first := got
			first.Batch, first.Count = false, batch[0].Count
			compareElement(t, first, elems[0])
		}
	default:
		if !reflect.DeepEqual(got, Message{Raw: raw}) || len(batch) != 1 {
			t.Fatalf("%q: Scan gives %+v and %d ScanBatch calls, want only Raw and 1", data, got, len(batch))
		}
	}
	compareVersion(t, data, got)
}

func compareElement(t *testing.T, got Message, e json.RawMessage) {
	t.Helper()
	if e[0] == '{' {
		if got.Count != 1 {
			t.Fatalf("element %s: Count %d, want 1", e, got.Count)
		}
		compare(t, got, e)
		return
	}
	if !reflect.DeepEqual(got, Message{Raw: e}) {
		t.Fatalf("element %s: got %+v, want only Raw", e, got)
	}
}

// compare checks m against encoding/json's reading of the object obj.
func compare(t *testing.T, m Message, obj json.RawMessage) {
	t.Helper()
	var members map[string]json.RawMessage
	if err := json.Unmarshal(obj, &members); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m.Raw, obj) {
		t.Fatalf("Raw = %s, want %s", m.Raw, obj)
	}
	for _, f := range []struct {
		name string
		got  []byte
	}{{"id", m.ID}, {"params", m.Params}, {"result", m.Result}, {"error", m.Error}} {
		want, ok := members[f.name]
		if ok != (f.got != nil) || !bytes.Equal(f.got, want) {
			t.Fatalf("%s: %s = %q, want %q (present %v)", obj, f.name, f.got, want, ok)
		}
	}
	var version string
	wantVersion := json.Unmarshal(members["jsonrpc"], &version) == nil && version == "2.0"
	if m.Version != wantVersion {
		t.Fatalf("%s: Version = %v, want %v", obj, m.Version, wantVersion)
	}
	rawMethod, hasMethod := members["method"]
	var method string
	isString := hasMethod && rawMethod[0] == '"'
	if isString {
		if err := json.Unmarshal(rawMethod, &method); err != nil {
			t.Fatal(err)
		}
	}
	if (m.Method != nil) != isString || m.MethodString() != method || isString && !m.MethodIs(method) {
		t.Fatalf("%s: Method = %q (decoded %q), want %q (string %v)", obj, m.Method, m.MethodString(), method, isString)
	}
	if want := refKind(members, hasMethod, isString); m.Kind != want {
		t.Fatalf("%s: Kind = %v, want %v", obj, m.Kind, want)
	}
}

// refKind is Message's classification rule, written over a decoded map.
func refKind(members map[string]json.RawMessage, hasMethod, isString bool) mcp.RPCKind {
	id, hasID := members["id"]
	if hasID {
		var v any
		json.Unmarshal(id, &v)
		switch v.(type) {
		case string, float64, nil:
		default:
			return mcp.RPCNone
		}
	}
	_, hasError := members["error"]
	_, hasResult := members["result"]
	switch {
	case hasMethod && !isString:
		return mcp.RPCNone
	case hasMethod && hasID:
		return mcp.RPCRequest
	case hasMethod:
		return mcp.RPCNotification
	case hasID && hasError:
		return mcp.RPCError
	case hasID && hasResult:
		return mcp.RPCResponse
	}
	return mcp.RPCNone
}

// compareLookup checks Lookup for every member encoding/json finds in obj.
func compareLookup(t *testing.T, data []byte, obj json.RawMessage) {
	t.Helper()
	var members map[string]json.RawMessage
	if err := json.Unmarshal(obj, &members); err != nil {
		t.Fatal(err)
	}
	for k, want := range members {
		if got := Lookup(data, k); !bytes.Equal(got, want) {
			t.Fatalf("%s: Lookup(%q) = %q, want %q", obj, k, got, want)
		}
	}
	if got := Lookup(data, "\x00absent"); got != nil && members["\x00absent"] == nil {
		t.Fatalf("%s: Lookup of an absent key = %q", obj, got)
	}
}

func compareVersion(t *testing.T, data []byte, m Message) {
	t.Helper()
	want, wantOK := "", false
	if m.Kind == mcp.RPCResponse && !m.Batch {
		var result map[string]json.RawMessage
		if json.Unmarshal(m.Result, &result) == nil {
			wantOK = json.Unmarshal(result["protocolVersion"], &want) == nil && result["protocolVersion"][0] == '"'
		}
	}
	if got, ok := ProtocolVersion(data); got != want || ok != wantOK {
		t.Fatalf("%q: ProtocolVersion() = %q, %v; want %q, %v", data, got, ok, want, wantOK)
	}
}

// TestScanMatchesEncodingJSON checks the benchmark's messages and a few
// others against encoding/json, as FuzzScan does: cut short anywhere,
// after up to seven spaces, and with each byte replaced by one that
// matters to the grammar.
func TestScanMatchesEncodingJSON(t *testing.T) {
	docs := []string{
		`{"id":1,"result":{"a":[1,-2.5e+3,0,true,false,null,"x\"y\\z\u00e9\/"],"b":{}," c ":[[]]}}`,
		"{\"method\":\"n\",\"params\":{\"t\":\"日本語のテキスト、少し長め\",\"u\":\"\xff\xfe\"}}",
		" [ {\"id\" : 1 , \"result\" : [ 1 , { \"a\" : 2 } ] } ,\t{\"method\":\"b\"} ] ",
	}
	for _, bm := range benchMessages {
		docs = append(docs, bm.data)
	}
	repl := []byte("\"\\{}[]:,0123456789-+.eE \t\nntf\x00\x1f\x7f\x80\xffu/a")
	for _, doc := range docs {
		for pad := range 8 {
			padded := strings.Repeat(" ", pad) + doc
			for cut := 0; cut <= len(padded); cut++ {
				checkScan(t, []byte(padded[:cut]))
			}
		}
		for i := range len(doc) {
			for _, c := range repl {
				data := []byte(doc)
				data[i] = c
				checkScan(t, data)
			}
		}
	}
}

// scanAll returns the messages ScanBatch calls fn with.
func scanAll(data []byte) []Message {
	var all []Message
	ScanBatch(data, func(m Message) bool {
		all = append(all, m)
		return true
	})
	return all
}
