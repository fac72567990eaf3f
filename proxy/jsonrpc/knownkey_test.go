package jsonrpc

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestKnownKeysAsWritten: the member names Scan recognises a word at a
// time, and the version "2.0", give what reading them byte by byte gives,
// written compact or not, escaped, near-missed, cut short anywhere, or
// repeated.
func TestKnownKeysAsWritten(t *testing.T) {
	names := []string{`"jsonrpc"`, `"method"`, `"params"`, `"result"`, `"error"`, `"id"`,
		`"jsonrpcx"`, `"jsonrp"`, `"methods"`, `"metho"`, `"param"`, `"results"`, `"errors"`, `"err"`, `"i"`, `"idx"`,
		`"\u006aSONRPC"`, `"\u0069d"`, `"m\u0065thod"`, `"error\""`, `"id\\"`}
	values := map[string]string{`"jsonrpc"`: `"2.0"`, `"method"`: `"tools/call"`, `"id"`: `7`}
	var docs []string
	for _, n := range names {
		v, ok := values[n]
		if !ok {
			v = `{"a":[1,"b"]}`
		}
		for _, colon := range []string{":", " :", ": ", "\t:\n"} {
			docs = append(docs,
				`{`+n+colon+v+`}`,
				`{"jsonrpc":"2.0",`+n+colon+v+`,"id":1}`,
				`{`+n+colon+v+`,`+n+colon+`null}`,
				`[{`+n+colon+v+`},{`+n+colon+`1}]`)
		}
	}
	for _, v := range []string{`"2.0"`, `"2.0x"`, `"2.00"`, `"2.1"`, `"2\u002e0"`, `"2.0\""`, `"2."`, `2.0`, `"2.0`} {
		docs = append(docs, `{"jsonrpc":`+v+`,"method":"m"}`, `{"jsonrpc":`+v+`}`)
	}
	for _, doc := range docs {
		for cut := len(doc); cut >= 0; cut-- {
			data := []byte(doc[:cut])
			got := Scan(data)
			if !json.Valid(data) {
				if !reflect.DeepEqual(got, Message{}) {
					t.Fatalf("encoding/json rejects %q, Scan gives %+v", data, got)
				}
				continue
			}
			if data[0] == '{' {
				compare(t, got, data)
			} else {
				var elems []json.RawMessage
				if err := json.Unmarshal(data, &elems); err != nil {
					t.Fatal(err)
				}
				first := got
				first.Batch, first.Count = false, 1
				compareElement(t, first, elems[0])
			}
		}
	}
}
