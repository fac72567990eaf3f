package trace

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// hostilePieces are what the random texts of these tests are made of: the
// bytes a JSON string escapes, the characters the trace escapes on top
// (U+2028, U+2029) and their neighbours, valid multi-byte characters, and
// every kind of invalid UTF-8 (stray, overlong, surrogate, past U+10FFFF,
// cut short).
var hostilePieces = []string{
	`"`, `\`, `\"`, `""`, "\x00", "\x01", "\x08", "\t", "\n", "\r", "\x1b", "\x1f", " ", "\x7f",
	"\u2028", "\u2029", "\u2027", "\u202a", "\u2000", "é", "€", "\U0001F600", "\uffff", "\U0010FFFF",
	"\xff", "\xfe", "\x80", "\xbf", "\xc0\x80", "\xc1\xbf", "\xc3\x28", "\xe0\x80\x80", "\xe0\x9f\xbf",
	"\xed\xa0\x80", "\xed\xbf\xbf", "\xf0\x80\x80\x80", "\xf4\x90\x80\x80", "\xf5\x80\x80\x80",
	"\xe2\x80", "\xe2", "\xf0\x9f\x98", "\xc3", "\xe2\x80\xa8\xe2\x80",
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":17}}`,
	"id: 17\ndata: ", "\n\n", "abcdefgh", "abcdefghijklmnop",
}

// hostileText returns a random text of hostile pieces and ASCII runs,
// valid UTF-8 or not; now and then a long one, so that buffers grow.
func hostileText(r *rand.Rand) []byte {
	n := r.IntN(12)
	if r.IntN(100) == 0 {
		n = 500 + r.IntN(3000)
	}
	var b []byte
	for range n {
		if r.IntN(3) == 0 {
			for range r.IntN(24) {
				b = append(b, byte(' '+r.IntN(0x7f-' ')))
			}
			continue
		}
		if r.IntN(40) == 0 {
			b = append(b, byte(r.IntN(256)))
			continue
		}
		b = append(b, hostilePieces[r.IntN(len(hostilePieces))]...)
	}
	return b
}

// validText is hostileText cut to its valid UTF-8 prefix most of the
// time, so that most texts take the JSON string form and not base64.
func validText(r *rand.Rand) []byte {
	b := hostileText(r)
	if r.IntN(4) == 0 {
		return b
	}
	return bytes.ToValidUTF8(b, []byte("\u2028"))
}

// randomObservation returns an observation of a random kind with each of
// its members set or not at random, its texts hostile.
func randomObservation(r *rand.Rand) *observe.Observation {
	str := func() string { return string(validText(r)) }
	opt := func() bool { return r.IntN(2) == 0 }
	small := func() int {
		switch r.IntN(4) {
		case 0:
			return 0
		case 1:
			return r.IntN(10)
		case 2:
			return r.IntN(1000) - 10
		}
		return int(r.Int64()) >> r.IntN(64)
	}
	o := &observe.Observation{Kind: observe.Kind(r.IntN(7)), At: time.Duration(small()) * time.Microsecond,
		Exchange: uint64(r.IntN(3)), Stream: mcp.StreamType(r.IntN(6)), SessionSeq: r.IntN(3)}
	if r.IntN(8) == 0 {
		o.Exchange = r.Uint64()
	}
	if opt() {
		o.Session = []string{"s-1", "s-2", str()}[r.IntN(3)]
	}
	if opt() {
		o.Protocol = []string{"2025-11-25", "2026-07-28", str()}[r.IntN(3)]
	}
	if r.IntN(5) == 0 {
		for range 1 + r.IntN(3) {
			o.Fired = append(o.Fired, faults.Firing{Index: small(), Kind: str(), Traits: faults.Traits(r.Uint32())})
		}
	}
	switch r.IntN(5) {
	case 0:
		q := &observe.Request{Method: str(), Path: str(), LastEventID: str(), HasLastEventID: opt(), Messages: randomMessages(r)}
		if opt() {
			q.Header = http.Header{}
			for range r.IntN(4) {
				name := []string{"Mcp-Session-Id", "Authorization", "Accept", "x-api-key", str()}[r.IntN(5)]
				for range 1 + r.IntN(2) {
					q.Header[name] = append(q.Header[name], str())
				}
			}
		}
		for range r.IntN(3) {
			q.Cancels = append(q.Cancels, str())
		}
		q.Action = observe.RequestAction{Latency: time.Duration(small()) * time.Microsecond, Answered: opt(), Dropped: opt(), Hang: opt(),
			LastEventIDChanged: opt(), ForwardedLastEventID: str(), HasForwardedLastEventID: opt()}
		for range r.IntN(2) {
			q.Action.StrippedHeaders = append(q.Action.StrippedHeaders, str())
			q.Action.SetHeaders = append(q.Action.SetHeaders, faults.HeaderSet{Name: str(), Value: str()})
		}
		o.Request = q
	case 1:
		o.Response = &observe.Response{Status: small(), Origin: observe.Origin(r.IntN(4)), EventStream: opt(), Session: str(),
			Throttle: small(), CloseAfter: time.Duration(small()) * time.Microsecond}
		if opt() {
			o.Response.Header = http.Header{"Mcp-Session-Id": {str()}, str(): {str(), str()}}
		}
	case 2, 3:
		o.Event = randomEvent(r)
	case 4:
		if opt() {
			o.End = &observe.End{Cause: observe.Cause(r.IntN(7)), Messages: randomMessages(r), Error: str()}
			break
		}
		p := &observe.ProfileChange{Action: []string{observe.ProfileSwap, observe.ProfileEnable, str()}[r.IntN(3)], Name: str(),
			Seed: r.Uint64(), Text: str(), Faults: small(), Fault: small()}
		if opt() {
			// Check ids are names fray defines, written as member names.
			p.Checks = map[string]checks.Severity{"client.backoff": checks.Error, "server.priming-event": checks.Severity(str())}
		}
		o.Profile = p
	}
	return o
}

// messageTexts are JSON-RPC messages as an event's data may hold them:
// compact and not, batches, blanks around them, escapes, text beyond
// ASCII (U+2028 among it), and the smallest object and array.
var messageTexts = []string{
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":17}}`,
	`{ "jsonrpc" : "2.0", "id" : 3, "result" : { "content" : [ ] } }`,
	`[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"x"}}]`,
	` {"jsonrpc":"2.0","id":"a\"b\\c\u0000","result":{}}` + "\t",
	"\t\t" + `{"jsonrpc":"2.0","method":"m"}` + "  ",
	`{"jsonrpc":"2.0","id":1,"result":"é €"}`,
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"\u2028\"}",
	`{}`, `[]`,
}

// randomEvent returns an event whose raw block and other texts are hostile,
// "endpoint" events among them for the redaction of their query.
func randomEvent(r *rand.Rand) *observe.Event {
	txt := func() []byte { return validText(r) }
	opt := func() bool { return r.IntN(2) == 0 }
	ev := &observe.Event{Event: mcp.Event{Index: r.IntN(100000), Raw: txt(), Parsed: opt(), HasID: opt(), Retry: r.Int64N(5000) - 10,
		HasRetry: opt(), Priming: opt(), Dispatched: opt(), RPCKind: mcp.RPCKind(r.IntN(5))},
		Fate: observe.Fate(r.IntN(7)), DeliveredAt: time.Duration(r.IntN(3)*r.IntN(1e9)) * time.Microsecond,
		DeliveredHasID: opt(), DeliveredRetry: r.Int64N(100), DeliveredHasRetry: opt(), Copies: r.IntN(3), Corrupted: opt()}
	if opt() {
		ev.Type = txt()
	}
	if r.IntN(6) == 0 {
		ev.Type = []byte("endpoint")
		ev.Raw = append([]byte("event: endpoint\ndata: /messages?session_id="), append(txt(), "&api_key=k\n\n"...)...)
	}
	if r.IntN(4) == 0 && string(ev.Type) != "endpoint" {
		// A message whose data is a part of its block, as the proxy's
		// blocks are: raw_parts, unless the JSON or the text around it
		// rules that out.
		before := append(append([]byte("id: "), hostileText(r)...), "\ndata: "...)
		msg := messageTexts[r.IntN(len(messageTexts))]
		ev.Raw = append(append(before, msg...), []string{"\n\n", "\r\n\r\n", "\n\xff\n"}[r.IntN(3)]...)
		ev.Data = ev.Raw[len(before) : len(before)+len(msg)]
		ev.Parsed, ev.Dispatched, ev.RPCKind = true, opt(), mcp.RPCKind(r.IntN(5))
	}
	if ev.HasID {
		ev.ID = txt()
	}
	if opt() {
		ev.RPCMethod = txt()
	}
	if opt() {
		ev.RPCID = txt()
	}
	if opt() {
		ev.Delivered = txt()
		if ev.Delivered == nil {
			ev.Delivered = []byte{}
		}
	}
	if ev.DeliveredHasID {
		ev.DeliveredID = txt()
	}
	return ev
}

func randomMessages(r *rand.Rand) []observe.Message {
	str := func() string { return string(validText(r)) }
	var ms []observe.Message
	for range r.IntN(3) {
		ms = append(ms, observe.Message{Kind: mcp.RPCKind(r.IntN(5)), Method: str(), ID: str(), ProgressToken: str(), Protocol: str(),
			Name: str(), HasName: r.IntN(2) == 0, NameUnknown: r.IntN(2) == 0, ErrorCode: r.IntN(3) * -32000, Params: r.Uint64() >> r.IntN(64),
			TaskID: str(), PollMS: r.Int64N(3) * 250})
	}
	return ms
}

// FuzzEncoder encodes observations built around the fuzzed bytes, as an
// event's raw block and ids, as header values and message members: every
// line must be JSON, and the reader must find in it the event's bytes
// exactly, however hostile.
func FuzzEncoder(f *testing.F) {
	f.Add([]byte("id: 17\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n"), "s-1", uint64(1))
	f.Add([]byte("\xe2\x80\xa8\xe2\x80\xa9\x00\x1f\"\\\x7f\xff"), "\xed\xa0\x80", uint64(2))
	f.Add([]byte(strings.Repeat(`"\`, 5000)), "\xe2\x80", uint64(3))
	f.Add([]byte("abcdefg\xe2\x80\xa8"), "\u2029", uint64(4))
	f.Fuzz(func(t *testing.T, data []byte, s string, seed uint64) {
		r := rand.New(rand.NewPCG(seed, 0))
		ev := randomEvent(r)
		ev.Raw, ev.ID, ev.HasID, ev.Delivered = data, data[:len(data)/2], true, data[len(data)/3:]
		ev.RPCMethod, ev.RPCID = []byte(s), data[len(data)/4:]
		ev.Fate = observe.Delivered
		obs := []*observe.Observation{
			{Kind: observe.KindEvent, Exchange: seed, Session: s, Protocol: s, Event: ev},
			{Kind: observe.KindRequest, Session: s, Request: &observe.Request{Method: s, Path: string(data),
				Header: http.Header{"Mcp-Session-Id": {s}, s: {string(data)}}, Messages: []observe.Message{{Method: s, ID: string(data), HasName: true, Name: s}},
				Cancels: []string{s, string(data)}}},
			randomObservation(r),
		}
		out := encodeAll(t, WriterOptions{NoRedact: true}, obs)
		for i, line := range bytes.SplitAfter(out, []byte("\n")) {
			if len(line) > 0 && !json.Valid(line) {
				t.Fatalf("line %d is not JSON: %q", i+1, line)
			}
		}
		_, o := firstOf(t, bytes.NewReader(out), "fuzz.jsonl")
		got := o.Event
		if !bytes.Equal(got.Raw, ev.Raw) || !bytes.Equal(got.ID, ev.ID) || !bytes.Equal(got.Delivered, ev.Delivered) {
			t.Fatalf("the event's bytes came back as raw %q id %q delivered %q", got.Raw, got.ID, got.Delivered)
		}
	})
}

// TestEscapeAsEncodingJSON: a string written by appendString reads back,
// through encoding/json, as encoding/json itself would write and read it
// (invalid UTF-8 as U+FFFD), with no raw control byte, U+2028 or U+2029
// left in the line; appendValidString writes the same when the text is
// valid UTF-8 and nothing otherwise.
func TestEscapeAsEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	texts := append([]string{""}, hostilePieces...)
	for range 3000 {
		texts = append(texts, string(hostileText(r)))
	}
	for _, s := range texts {
		got := appendString([]byte("x:"), s)
		var back, want string
		if err := json.Unmarshal(got[2:], &back); err != nil {
			t.Fatalf("%q is written %q: %v", s, got, err)
		}
		enc, _ := json.Marshal(s)
		_ = json.Unmarshal(enc, &want)
		if back != want {
			t.Fatalf("%q reads back as %q, want %q", s, back, want)
		}
		if bytes.ContainsFunc(got, func(c rune) bool { return c < 0x20 || c == '\u2028' || c == '\u2029' }) {
			t.Fatalf("%q is written %q, with a raw control, U+2028 or U+2029", s, got)
		}
		v, ok := appendValidString([]byte("x:"), []byte(s))
		if valid := utf8.ValidString(s); ok != valid || valid && !bytes.Equal(v, got) || !valid && string(v) != "x:" {
			t.Fatalf("%q kept as valid (%v): %q", s, ok, v)
		}
	}
}

// TestNamesArePlain: the names of the enumerations the event encoder
// writes with enc.name, unknown values' included, need no escape.
func TestNamesArePlain(t *testing.T) {
	for v := range 256 {
		for _, name := range []string{observe.Kind(v).String(), observe.Fate(v).String(), mcp.RPCKind(v).String()} {
			if got := string(appendString(nil, name)); got != `"`+name+`"` {
				t.Errorf("%q is written %s", name, got)
			}
		}
	}
}

// TestObserveRunWritesAsObserve: a Writer passed observations in runs
// (ObserveRun, as the engine's queue passes its events on) writes the
// trace, byte for byte, that one passed them one at a time writes.
func TestObserveRunWritesAsObserve(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	obs := make([]*observe.Observation, 2000)
	for i := range obs {
		obs[i] = randomObservation(r)
	}
	opts := WriterOptions{Header: Header{Started: time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)}}
	want := encodeAll(t, opts, obs)
	var b bytes.Buffer
	w := writerTo(t, &b, opts)
	for i, runs := 0, 0; i < len(obs); runs++ {
		run := make([]observe.Observation, min(1+runs%40, len(obs)-i))
		for j := range run {
			run[j] = *obs[i+j]
		}
		w.ObserveRun(run)
		i += len(run)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("in runs, the Writer wrote %d bytes that differ from the %d it writes one observation at a time", b.Len(), len(want))
	}
}

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
