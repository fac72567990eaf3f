package trace

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// TestRawParts writes events whose data is a JSON-RPC message and reads
// them back: the block comes back byte for byte whichever form the line
// took, and the line takes raw_parts exactly when the message can go in
// as it came (an ASCII object or array found in the block, with UTF-8
// around it), raw or raw_b64 otherwise.
func TestRawParts(t *testing.T) {
	progress := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":17}}`
	cases := []struct {
		name          string
		before, after string
		data          string
		kind          mcp.RPCKind
		dispatched    bool
		copied        bool // the data is a copy, not a part of the block
		want          string
	}{
		{"compact", "id: 17\ndata: ", "\n\n", progress, mcp.RPCNotification, true, false, "raw_parts"},
		{"blanks around", "data:  ", "\t \r\n\r\n", "\t" + progress + " ", mcp.RPCNotification, true, false, "raw_parts"},
		{"batch", "data: ", "\n\n", `[{"jsonrpc":"2.0","id":1,"result":{}}]`, mcp.RPCResponse, true, false, "raw_parts"},
		{"spaced JSON", "event: message\ndata: ", "\n\n", `{ "jsonrpc" : "2.0" , "id" : 1 , "result" : { } }`, mcp.RPCResponse, true, false, "raw_parts"},
		{"escapes in the JSON", "data: ", "\n\n", `{"jsonrpc":"2.0","id":"a\"b\\c\u0000\u2028","result":{}}`, mcp.RPCResponse, true, false, "raw_parts"},
		{"text beyond ASCII", "data: ", "\n\n", `{"jsonrpc":"2.0","id":1,"result":"é"}`, mcp.RPCResponse, true, false, "raw"},
		{"U+2028 as it is", "data: ", "\n\n", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"\u2028\"}", mcp.RPCResponse, true, false, "raw"},
		{"an id that is not UTF-8", "id: \xff\ndata: ", "\n\n", progress, mcp.RPCNotification, true, false, "raw_b64"},
		{"not UTF-8 after", "data: ", "\n:\xfe\n\n", progress, mcp.RPCNotification, true, false, "raw_b64"},
		{"not JSON-RPC", "data: ", "\n\n", `{"hello":"world"}`, mcp.RPCNone, true, false, "raw"},
		{"not dispatched", "data: ", "\n\n", progress, mcp.RPCNotification, false, false, "raw"},
		{"data joined from lines", "data: ", "\n\n", progress, mcp.RPCNotification, true, true, "raw"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw := []byte(c.before + c.data + c.after)
			data := raw[len(c.before) : len(c.before)+len(c.data)]
			if c.copied {
				data = bytes.Clone(data)
			}
			o := &observe.Observation{Kind: observe.KindEvent, Exchange: 1, Stream: mcp.StreamGet,
				Event: &observe.Event{Event: mcp.Event{Index: 4, Raw: raw, Parsed: true, Dispatched: c.dispatched, Data: data, RPCKind: c.kind},
					Fate: observe.Delivered, Copies: 1}}
			out := encodeAll(t, WriterOptions{}, []*observe.Observation{o})
			line := strings.Split(string(out), "\n")[1]
			if !json.Valid([]byte(line)) {
				t.Fatalf("the line is not JSON: %s", line)
			}
			var w struct {
				Event map[string]json.RawMessage `json:"event"`
			}
			if err := json.Unmarshal([]byte(line), &w); err != nil {
				t.Fatal(err)
			}
			var forms []string
			for _, f := range []string{"raw", "raw_b64", "raw_parts"} {
				if _, ok := w.Event[f]; ok {
					forms = append(forms, f)
				}
			}
			if len(forms) != 1 || forms[0] != c.want {
				t.Errorf("the block was written as %v, want %s: %s", forms, c.want, line)
			}
			r, got := firstOf(t, bytes.NewReader(out), "t.jsonl")
			if !bytes.Equal(got.Event.Raw, raw) {
				t.Errorf("read back the block %q, wrote %q", got.Event.Raw, raw)
			}
			if _, err := r.Next(); err != io.EOF {
				t.Errorf("after the event: %v, want io.EOF", err)
			}
		})
	}
}
