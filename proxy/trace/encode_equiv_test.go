package trace

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
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

// encoderPair is the encoder and the reference, each with its own state,
// fed the same observations.
type encoderPair struct {
	e          enc
	ref        refEnc
	red, refRd redactor
}

func newEncoderPair(redactSessions bool) *encoderPair {
	p := &encoderPair{}
	for _, red := range []*redactor{&p.red, &p.refRd} {
		red.names = map[string]bool{"Authorization": true}
		if redactSessions {
			red.names[sessionHeader] = true
			red.sessions = map[string]string{}
		}
	}
	return p
}

// check encodes o with both and fails when their bytes differ. The
// encoder appends to what it already holds, as the Writer has it do.
func (p *encoderPair) check(t testing.TB, o *observe.Observation) {
	t.Helper()
	start := len(p.e.b)
	if start > 1<<16 {
		p.e.b, start = p.e.b[:0], 0
	}
	encodeObservation(&p.e, o, &p.red)
	p.ref.b = p.ref.b[:0]
	refEncodeObservation(&p.ref, o, &p.refRd)
	if got := p.e.b[start:]; !bytes.Equal(got, p.ref.b) {
		t.Fatalf("observation %s encodes as\n%q\nthe reference encodes it as\n%q", dump(o), got, p.ref.b)
	}
}

// TestEncoderMatchesReference encodes many random observations with
// hostile texts, some long, with and without session redaction, and
// requires the bytes the encoder before it was made faster wrote, one
// observation after the other (so that what one leaves behind in the
// buffer and in the shared exchange head is exercised too).
func TestEncoderMatchesReference(t *testing.T) {
	for _, redactSessions := range []bool{false, true} {
		t.Run(fmt.Sprintf("redact-sessions=%v", redactSessions), func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(len(t.Name()))))
			p := newEncoderPair(redactSessions)
			for _, o := range sample() {
				p.check(t, o)
			}
			n := 5000
			if testing.Short() {
				n = 500
			}
			for range n {
				p.check(t, randomObservation(r))
			}
		})
	}
}

// TestWriterMatchesReference writes random observations through a Writer
// and requires each line to be the reference's encoding of its
// observation.
func TestWriterMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	var obs []*observe.Observation
	for range 3000 {
		obs = append(obs, randomObservation(r))
	}
	out := encodeAll(t, WriterOptions{RedactHeaders: []string{"x-api-key", "mcp-session-id"}}, obs)
	lines := strings.SplitAfter(string(out), "\n")
	if len(lines) != len(obs)+3 || lines[len(lines)-1] != "" {
		t.Fatalf("%d lines for %d observations", len(lines), len(obs))
	}
	ref := newEncoderPair(true)
	for _, n := range append(DefaultRedact, "X-Api-Key") {
		ref.refRd.names[n] = true
	}
	for i, o := range obs {
		ref.ref.b = ref.ref.b[:0]
		refEncodeObservation(&ref.ref, o, &ref.refRd)
		if want := string(ref.ref.b) + "\n"; lines[i+1] != want {
			t.Fatalf("line %d is\n%q\nthe reference writes\n%q", i+2, lines[i+1], want)
		}
	}
}

// FuzzEncoderMatchesReference encodes observations built around the fuzzed
// bytes, as an event's raw block and ids, as header values and message
// members, and requires the reference's bytes.
func FuzzEncoderMatchesReference(f *testing.F) {
	f.Add([]byte("id: 17\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n"), "s-1", uint64(1))
	f.Add([]byte("\xe2\x80\xa8\xe2\x80\xa9\x00\x1f\"\\\x7f\xff"), "\xed\xa0\x80", uint64(2))
	f.Add([]byte(strings.Repeat(`"\`, 5000)), "\xe2\x80", uint64(3))
	f.Add([]byte("abcdefg\xe2\x80\xa8"), "\u2029", uint64(4))
	f.Fuzz(func(t *testing.T, data []byte, s string, seed uint64) {
		r := rand.New(rand.NewPCG(seed, 0))
		p := newEncoderPair(seed&1 == 0)
		ev := randomEvent(r)
		ev.Raw, ev.ID, ev.HasID, ev.Delivered = data, data[:len(data)/2], true, data[len(data)/3:]
		ev.RPCMethod, ev.RPCID = []byte(s), data[len(data)/4:]
		p.check(t, &observe.Observation{Kind: observe.KindEvent, Exchange: seed, Session: s, Protocol: s, Event: ev})
		p.check(t, &observe.Observation{Kind: observe.KindRequest, Session: s, Request: &observe.Request{Method: s, Path: string(data),
			Header: http.Header{"Mcp-Session-Id": {s}, s: {string(data)}}, Messages: []observe.Message{{Method: s, ID: string(data), HasName: true, Name: s}},
			Cancels: []string{s, string(data)}}})
		p.check(t, randomObservation(r))
	})
}

// TestEscapeRoom escapes strings that are mostly escapes, each of them at
// every position relative to the end of the room the buffer has to start
// with, so that every way of running out of room is taken.
func TestEscapeRoom(t *testing.T) {
	for _, piece := range []string{"\x01", `"`, "\u2028", "\xff", "é", "\U0001F600"} {
		for count := range 20 {
			for prefix := range 10 {
				s := strings.Repeat("a", prefix) + strings.Repeat(piece, count) + strings.Repeat("b", count%3)
				want := refAppendString([]byte("x:"), s)
				for room := range 3*len(s) + escapeSlack {
					b := append(make([]byte, 0, 2+room), "x:"...)
					if got := appendString(b, s); !bytes.Equal(got, want) {
						t.Fatalf("%q with room for %d: %q, want %q", s, room, got, want)
					}
					if got, _ := appendEscaped(b, []byte(s), true); !bytes.Equal(got, want) {
						t.Fatalf("%q as bytes with room for %d: %q, want %q", s, room, got, want)
					}
					got, ok := appendValidString(b, []byte(s))
					if valid := utf8.ValidString(s); ok != valid || valid && !bytes.Equal(got, want) || !valid && !bytes.Equal(got, b) {
						t.Fatalf("%q kept as valid (%v) with room for %d: %q, want %q", s, ok, room, got, want)
					}
				}
			}
		}
	}
}

// TestSpecialIsExact checks the word-at-a-time test against the table,
// for every byte value at every position among plain and special
// neighbours.
func TestSpecialIsExact(t *testing.T) {
	for _, fill := range []byte{'a', '"', 0x00, 0x1f, 0x20, 0x7f, 0x80, 0xff} {
		for pos := range 8 {
			for c := range 256 {
				var word [8]byte
				for i := range word {
					word[i] = fill
				}
				word[pos] = byte(c)
				m := special(binary.LittleEndian.Uint64(word[:]))
				for i, b := range word {
					if got := m>>(8*i+7)&1 == 1; got != !jsonSafe[b] {
						t.Fatalf("word % x: byte %d (%#x) flagged %v", word, i, b, got)
					}
				}
			}
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

// TestIntegersAsStrconv writes integers around every power of ten and the
// ends of their types as strconv does.
func TestIntegersAsStrconv(t *testing.T) {
	us := []uint64{0, math.MaxUint64, math.MaxInt64, 1 << 63}
	for p := uint64(1); p <= math.MaxUint64/10; p *= 10 {
		us = append(us, p-1, p, p+1, 2*p-1, 9*p, 10*p-1)
	}
	r := rand.New(rand.NewPCG(3, 3))
	for range 10000 {
		us = append(us, r.Uint64()>>r.IntN(64))
	}
	for _, u := range us {
		if got, want := string(appendUint([]byte("x"), u)), "x"+strconv.FormatUint(u, 10); got != want {
			t.Fatalf("appendUint(%d) = %q, want %q", u, got, want)
		}
		for _, v := range []int64{int64(u), -int64(u), math.MinInt64, math.MaxInt64} {
			if got, want := string(appendInt(nil, v)), strconv.FormatInt(v, 10); got != want {
				t.Fatalf("appendInt(%d) = %q, want %q", v, got, want)
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
	w, err := NewWriter(&b, opts)
	if err != nil {
		t.Fatal(err)
	}
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
