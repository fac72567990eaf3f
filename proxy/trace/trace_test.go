package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/jsonrpc"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// sample is one observation of every kind with every field set, plus the
// variants (bytes that are not UTF-8, an id that is set but empty).
func sample() []*observe.Observation {
	ms := time.Millisecond
	// A block whose data is a part of it, as the proxy's blocks are, with
	// blanks around its JSON: written as raw_parts.
	msg := []byte("event: message\nid: 2\ndata:  {\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}\t\n\n")
	msgData := msg[bytes.Index(msg, []byte("data: "))+6 : len(msg)-2]
	// A notification as the proxy reports one that went through as it
	// came: its identity scanned from its data, delivered when read, with
	// its own id (format 4 writes none of the three).
	note := []byte("id: 5\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\n")
	noteData := note[len("id: 5\ndata: ") : len(note)-2]
	noteMsg := jsonrpc.Scan(noteData)
	return []*observe.Observation{
		{Kind: observe.KindRequest, At: 1500 * time.Microsecond, Exchange: 1, Stream: mcp.StreamPost,
			Request: &observe.Request{Method: "POST", Path: "/mcp",
				Header: http.Header{"Accept": {"application/json, text/event-stream"}, "Content-Type": {"application/json"}},
				Messages: []observe.Message{{Kind: mcp.RPCRequest, Method: "initialize", ID: "0", ProgressToken: `"t-1"`, Protocol: "2026-07-28", Name: "add", HasName: true, Params: 0xfeedface},
					{Kind: mcp.RPCNotification, Method: "notifications/cancelled"}},
				Cancels: []string{"7", `"x"`}}},
		{Kind: observe.KindResponse, At: 3 * ms, Exchange: 1, Stream: mcp.StreamPost, Session: "s-1", SessionSeq: 1, Protocol: "2025-11-25",
			Response: &observe.Response{Status: 200, Origin: observe.FromUpstream, Header: http.Header{"Mcp-Session-Id": {"s-1"}}, EventStream: true, Session: "s-1"}},
		{Kind: observe.KindEvent, At: 4 * ms, Exchange: 1, Stream: mcp.StreamPost, Session: "s-1", SessionSeq: 1, Protocol: "2025-11-25",
			Event: &observe.Event{Event: mcp.Event{Index: 0, Raw: []byte("id: 1\nretry: 500\ndata:\n\n"), Parsed: true, ID: []byte("1"), HasID: true, Retry: 500, HasRetry: true, Priming: true}, Fate: observe.Delivered, DeliveredAt: 4 * ms, DeliveredID: []byte("1"), DeliveredHasID: true, DeliveredRetry: 500, DeliveredHasRetry: true, Copies: 1}},
		{Kind: observe.KindEvent, At: 5 * ms, Exchange: 1, Stream: mcp.StreamPost, Session: "s-1", SessionSeq: 1,
			Fired: []faults.Firing{{Index: 0, Kind: "strip-id", Traits: faults.HidesIDs}, {Index: 2, Kind: "duplicate", Traits: faults.Duplicates}},
			Event: &observe.Event{Event: mcp.Event{Index: 1, Raw: msg, Parsed: true, Type: []byte("message"), ID: []byte("2"), HasID: true, Dispatched: true, Data: msgData, RPCKind: mcp.RPCResponse, RPCID: []byte("0")}, Fate: observe.Delivered, DeliveredAt: 6 * ms, Delivered: []byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}\n\n"), Copies: 2, Corrupted: true}},
		{Kind: observe.KindEvent, At: 7 * ms, Exchange: 1, Stream: mcp.StreamPost, Fired: []faults.Firing{{Index: 1, Kind: "lose", Traits: faults.EndsStream | faults.WithholdsEvents}},
			Event: &observe.Event{Event: mcp.Event{Index: 2, Raw: []byte("id: \xff\xfe\ndata: \xc3\x28 \u2028\n\n"), Parsed: true, ID: []byte("\xff\xfe"), HasID: true, Dispatched: true, Data: []byte("\xc3\x28 \u2028"), RPCKind: mcp.RPCNotification, RPCMethod: []byte("notifications/progress")}, Fate: observe.Lost}},
		{Kind: observe.KindEvent, At: 8 * ms, Exchange: 1, Stream: mcp.StreamPost,
			Event: &observe.Event{Event: mcp.Event{Index: 3, Raw: []byte("id\n\n"), Parsed: true, HasID: true}, Fate: observe.Cut}},
		{Kind: observe.KindEvent, At: 9 * ms, Exchange: 1, Stream: mcp.StreamPost,
			Event: &observe.Event{Event: mcp.Event{Index: 4, Raw: []byte("data: cut at the end")}, Fate: observe.Undelivered}},
		{Kind: observe.KindEnd, At: 10 * ms, Exchange: 1, Stream: mcp.StreamPost, End: &observe.End{Cause: observe.FaultClosed}},
		{Kind: observe.KindRequest, At: 11 * ms, Exchange: 2, Stream: mcp.StreamResume, Session: "s-1", SessionSeq: 1,
			Fired: []faults.Firing{{Index: 3, Kind: "rewrite-last-event-id", Traits: faults.ChangesLastEventID}, {Index: 4, Kind: "latency"}},
			Request: &observe.Request{Method: "GET", Path: "/mcp", LastEventID: "2", HasLastEventID: true,
				Header: http.Header{"Last-Event-Id": {"2"}},
				Action: observe.RequestAction{Latency: 250 * ms, LastEventIDChanged: true, ForwardedLastEventID: "", HasForwardedLastEventID: true,
					StrippedHeaders: []string{"Mcp-Session-Id"}, SetHeaders: []faults.HeaderSet{{Name: "Mcp-Name", Value: "sub"}}}}},
		{Kind: observe.KindRequest, At: 12 * ms, Exchange: 3, Stream: mcp.StreamGet,
			Request: &observe.Request{Method: "GET", Path: "/mcp", Action: observe.RequestAction{Answered: true, Dropped: true, Hang: true, LastEventIDChanged: true,
				ForwardedLastEventID: "other-1", HasForwardedLastEventID: true}}},
		{Kind: observe.KindResponse, At: 13 * ms, Exchange: 3, Stream: mcp.StreamGet, Fired: []faults.Firing{{Index: 5, Kind: "status", Traits: faults.AnswersRequests}},
			Response: &observe.Response{Status: 503, Origin: observe.FromFault, Throttle: 2048, CloseAfter: 30 * time.Second}},
		{Kind: observe.KindEnd, At: 14 * ms, Exchange: 3, Stream: mcp.StreamGet,
			End: &observe.End{Cause: observe.UpstreamFailed, Error: "read: connection reset by peer",
				Messages: []observe.Message{{Kind: mcp.RPCError, ID: `"a"`, ErrorCode: -32020}, {Kind: mcp.RPCResponse, ID: "9", TaskID: "t-1", PollMS: 250}, {Kind: mcp.RPCNotification, Method: "notifications/cancelled"}}}},
		{Kind: observe.KindEnd, At: 15 * ms, Exchange: 4, Stream: mcp.StreamLegacy, End: &observe.End{Cause: observe.FaultAnswered, Unread: true}},
		{Kind: observe.KindProfile, At: 16 * ms, Profile: &observe.ProfileChange{Action: observe.ProfileSwap, Name: "swapped", Seed: 9,
			Text: "name = \"swapped\"\n", Faults: 3, Checks: map[string]checks.Severity{"client.backoff": checks.Off, "server.priming-event": checks.Error}}},
		{Kind: observe.KindProfile, At: 17 * ms, Profile: &observe.ProfileChange{Action: observe.ProfileDisable, Name: "swapped", Seed: 9, Fault: 2}},
		{Kind: observe.KindEvent, At: 18 * ms, Exchange: 5, Stream: mcp.StreamGet, Session: "s-1", SessionSeq: 1, Protocol: "2025-11-25",
			Event: &observe.Event{Event: mcp.Event{Index: 0, Raw: note, Parsed: true, ID: note[4:5], HasID: true, Dispatched: true, Data: noteData,
				RPCKind: noteMsg.Kind, RPCMethod: noteMsg.Method, RPCID: noteMsg.ID}, Scanned: true,
				Fate: observe.Delivered, DeliveredAt: 18 * ms, DeliveredID: note[4:5], DeliveredHasID: true, Copies: 1}},
	}
}

func writeAll(t *testing.T, path string, opts WriterOptions, obs []*observe.Observation, end time.Duration) {
	t.Helper()
	w, err := Create(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range obs {
		w.Observe(o)
	}
	if err := w.Finish(End{At: end, Drained: true}); err != nil {
		t.Fatal(err)
	}
}

var testHeader = Header{Started: time.Date(2025, 11, 25, 10, 0, 0, 123456789, time.UTC), Profile: "lossy-resume", Seed: 42,
	ProfileText: "name = \"lossy-resume\"\nseed = 42\n", Checks: map[string]checks.Severity{"client.backoff": checks.Off}}

func TestRoundTrip(t *testing.T) {
	for _, name := range []string{"run.jsonl", "run.jsonl.gz"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), name)
			writeAll(t, path, WriterOptions{Header: testHeader, NoRedact: true}, sample(), 20*time.Millisecond)
			tr, err := ReadFile(path, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := sample()
			if len(tr.Observations) != len(want) {
				t.Fatalf("read %d observations, wrote %d", len(tr.Observations), len(want))
			}
			for i := range want {
				if !reflect.DeepEqual(tr.Observations[i], want[i]) {
					t.Errorf("observation %d:\n got %s\nwant %s", i, dump(tr.Observations[i]), dump(want[i]))
				}
			}
			h := tr.Header
			if h.Version != Version || !h.Started.Equal(testHeader.Started) || h.Profile != "lossy-resume" || h.Seed != 42 ||
				h.ProfileText != testHeader.ProfileText || !maps.Equal(h.Checks, testHeader.Checks) || h.Redact != nil {
				t.Errorf("header = %+v", h)
			}
			if !reflect.DeepEqual(tr.End, End{At: 20 * time.Millisecond, Drained: true}) || tr.Truncation != nil {
				t.Errorf("end %v, truncation %v", tr.End, tr.Truncation)
			}
			raw, _ := os.ReadFile(path)
			if gz := bytes.HasPrefix(raw, []byte{0x1f, 0x8b}); gz != strings.HasSuffix(name, ".gz") {
				t.Errorf("gzip-compressed = %v for %s", gz, name)
			}
		})
	}
}

// TestSampleCoversEveryField checks that every field of an Observation,
// nested ones included, is set in at least one sample observation, so
// that the round trip covers a field added to the model later.
func TestSampleCoversEveryField(t *testing.T) {
	set := map[string]bool{}
	var walk func(path string, v reflect.Value)
	walk = func(path string, v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				walk(path, v.Elem())
			}
			return
		case reflect.Struct:
			for i := range v.NumField() {
				f := v.Type().Field(i)
				p := path + "." + f.Name
				if !v.Field(i).IsZero() {
					set[p] = true
				}
				walk(p, v.Field(i))
			}
		}
	}
	for _, o := range sample() {
		walk("Observation", reflect.ValueOf(o))
	}
	var all func(path string, t reflect.Type) []string
	all = func(path string, t reflect.Type) []string {
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || t.PkgPath() != "github.com/frayproxy/fray/proxy/observe" {
			return nil
		}
		var out []string
		for i := range t.NumField() {
			f := t.Field(i)
			out = append(out, path+"."+f.Name)
			out = append(out, all(path+"."+f.Name, f.Type)...)
		}
		return out
	}
	// Fields no observation that reaches a trace has set.
	notTraced := map[string]string{
		"Observation.Event.Unclassified": "the Classifier the proxy leaves it to (the engine's queue) clears it before the trace sees the event",
	}
	for _, p := range all("Observation", reflect.TypeOf(observe.Observation{})) {
		if !set[p] && notTraced[p] == "" {
			t.Errorf("%s is never set in sample(): add it to the sample and to the trace format", p)
		}
	}
}

func dump(o *observe.Observation) string {
	b, _ := json.Marshal(o)
	return string(b)
}

// TestEveryLineIsJSON checks the hand-written encoder against
// encoding/json: every line parses, and strings decode to what was
// written (invalid UTF-8 in plain strings becomes U+FFFD).
func TestEveryLineIsJSON(t *testing.T) {
	odd := "tab\t nul\x00 quote\" back\\ del\x7f ctl\x1f sep\u2028\u2029 bad\xff end\xe2\x80"
	out := encodeAll(t, WriterOptions{Header: testHeader}, []*observe.Observation{{Kind: observe.KindRequest,
		Request: &observe.Request{Method: "POST", Path: odd, Header: http.Header{"X-Odd": {odd}}}}})
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want header, observation, end:\n%s", len(lines), out)
	}
	for i, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Errorf("line %d is not JSON: %s", i+1, l)
		}
		if strings.ContainsRune(l, '\u2028') || strings.ContainsRune(l, '\u2029') {
			t.Errorf("line %d holds a raw U+2028/U+2029", i+1)
		}
	}
	var got, want struct {
		Request struct{ Path string } `json:"request"`
	}
	_ = json.Unmarshal([]byte(lines[1]), &got)
	ref, _ := json.Marshal(map[string]any{"request": map[string]string{"Path": odd}})
	_ = json.Unmarshal(ref, &want)
	if got.Request.Path != want.Request.Path {
		t.Errorf("path = %q, encoding/json makes %q", got.Request.Path, want.Request.Path)
	}
}

func TestRedaction(t *testing.T) {
	secret := http.Header{
		"Authorization": {"Bearer s3cret"}, "Cookie": {"a=s3cret"}, "Proxy-Authorization": {"Basic s3cret"},
		"X-Api-Key": {"s3cret"}, "Accept": {"text/event-stream"},
	}
	obs := []*observe.Observation{
		{Kind: observe.KindRequest, Exchange: 1, Request: &observe.Request{Method: "GET", Path: "/mcp", Header: secret}},
		{Kind: observe.KindResponse, Exchange: 1, Response: &observe.Response{Status: 200, Header: http.Header{"Set-Cookie": {"b=s3cret"}, "Content-Type": {"text/event-stream"}}}},
	}
	for _, tc := range []struct {
		name    string
		opts    WriterOptions
		secrets int    // the values that keep their secret
		kept    string // one of them, as written
		redact  []string
	}{
		{"default", WriterOptions{}, 1, `"X-Api-Key":["s3cret"]`, DefaultRedact},
		{"extra", WriterOptions{RedactHeaders: []string{"x-api-key"}}, 0, "", append(append([]string(nil), DefaultRedact...), "X-Api-Key")},
		{"no-redact", WriterOptions{NoRedact: true, RedactHeaders: []string{"x-api-key"}}, 5, `"Authorization":["Bearer s3cret"]`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.jsonl")
			writeAll(t, path, tc.opts, obs, 0)
			raw, _ := os.ReadFile(path)
			if n := strings.Count(string(raw), "s3cret"); n != tc.secrets || !strings.Contains(string(raw), tc.kept) {
				t.Errorf("%d secrets kept, want %d (%s) in:\n%s", n, tc.secrets, tc.kept, raw)
			}
			tr, err := ReadFile(path, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(tr.Header.Redact, tc.redact) {
				t.Errorf("header redact = %v, want %v", tr.Header.Redact, tc.redact)
			}
			got := tr.Observations[0].Request.Header
			if tc.name != "no-redact" && (got.Get("Authorization") != Redacted || got.Get("Accept") != "text/event-stream") {
				t.Errorf("read back header %v", got)
			}
		})
	}
}

// traceBytes returns a complete trace of sample(), gzip-compressed or not.
func traceBytes(t *testing.T, gz bool) []byte {
	t.Helper()
	name := "t.jsonl"
	if gz {
		name += ".gz"
	}
	path := filepath.Join(t.TempDir(), name)
	writeAll(t, path, WriterOptions{Header: testHeader}, sample(), 20*time.Millisecond)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestUnreadableTraces(t *testing.T) {
	plain := traceBytes(t, false)
	lines := bytes.SplitAfter(plain, []byte("\n"))
	gz := traceBytes(t, true)
	newer := bytes.Replace(plain, fmt.Appendf(nil, `{"fray_trace":%d,`, Version), fmt.Appendf(nil, `{"fray_trace":%d,`, Version+1), 1)
	gzNewer := gzipped(newer)
	// lines ends with "": lines[n-2] is the end line (line n-1), lines[n-3]
	// the last observation.
	n := len(lines)
	cutLast := bytes.Join(lines[:n-2], nil)
	cutLast = cutLast[:len(cutLast)-len(lines[n-3])/2]
	refuse(t, []hostileTrace{
		{"empty", nil, ErrNotTrace, 0, "the file is empty"},
		{"not a trace", []byte("{\"schema\":1,\"verdict\":\"pass\"}\n"), ErrNotTrace, 1, "not a fray trace"},
		{"binary", bytes.Repeat([]byte{0, 1, 2}, 100), ErrNotTrace, 1, "not a fray trace"},
		{"newer", newer, ErrNewer, 1, fmt.Sprintf("version %d is newer", Version+1)},
		{"newer gzip", gzNewer, ErrNewer, 1, fmt.Sprintf("version %d is newer", Version+1)},
		{"end line cut", plain[:len(plain)-10], ErrTruncated, n - 1, "the last line is cut"},
		{"observation cut", cutLast, ErrTruncated, n - 2, "the last line is cut"},
		{"no end line", bytes.Join(lines[:n-2], nil), ErrTruncated, n - 2, "stops before its end line"},
		{"gzip cut", gz[:len(gz)*2/3], ErrTruncated, -1, "gzip stream is cut"},
		{"gzip trailer cut", gz[:len(gz)-4], ErrTruncated, -1, "gzip stream is cut"},
		{"bad line", bytes.Replace(plain, []byte(`"fate":"lost"`), []byte(`"fate":"eaten"`), 1), ErrSyntax, 6, `event.fate "eaten" is unknown`},
		{"status 1000", bytes.Replace(plain, []byte(`"status":200`), []byte(`"status":1000`), 1), ErrSyntax, statusLine(lines), "response.status 1000 is outside 100-599"},
		{"status 99", bytes.Replace(plain, []byte(`"status":200`), []byte(`"status":99`), 1), ErrSyntax, statusLine(lines), "response.status 99 is outside 100-599"},
		{"garbage line", append(append(bytes.Join(lines[:3], nil), "not json\n"...), bytes.Join(lines[3:], nil)...), ErrSyntax, 4, "not a JSON object"},
	})
}

// statusLine is the number of the first line of a trace that holds
// "status":200.
func statusLine(lines [][]byte) int {
	for i, l := range lines {
		if bytes.Contains(l, []byte(`"status":200`)) {
			return i + 1
		}
	}
	return -1
}

func TestCreatedPrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	writeAll(t, path, WriterOptions{Header: testHeader}, sample(), 20*time.Millisecond)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if m := fi.Mode().Perm(); m != 0o600 {
		t.Errorf("trace created with mode %#o, want 0600: it keeps session ids", m)
	}
}

func TestPartial(t *testing.T) {
	plain := traceBytes(t, false)
	lines := bytes.SplitAfter(plain, []byte("\n"))
	gz := traceBytes(t, true)
	all := len(sample())
	for _, tc := range []struct {
		name      string
		data      []byte
		wantObs   int
		wantLine  int
		wantBytes int
		why       string
	}{
		{"last observation cut", bytes.Join(lines[:len(lines)-2], nil)[:len(bytes.Join(lines[:len(lines)-2], nil))-7], all - 1, len(lines) - 2, len(lines[len(lines)-3]) - 7, "the last line is cut"},
		{"no end line", bytes.Join(lines[:len(lines)-2], nil), all, 0, 0, "stops before its end line"},
		{"gzip cut", gz[:len(gz)/2], -1, 0, 0, "gzip stream is cut"},
		{"gzip trailer cut", gz[:len(gz)-4], all, 0, 0, "gzip stream is cut"},
		{"complete", plain, all, -1, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "part.jsonl")
			writeFile(t, path, tc.data)
			tr, err := ReadFile(path, ReadOptions{Partial: true})
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantObs < 0 {
				// Cut inside the compressed data: some prefix comes out.
				tc.wantObs = len(tr.Observations)
				if tc.wantObs == 0 || tc.wantObs >= all || tr.Truncation == nil {
					t.Fatalf("read %d observations of %d, truncation %v", tc.wantObs, all, tr.Truncation)
				}
				tc.wantLine, tc.wantBytes = tr.Truncation.Line, tr.Truncation.Bytes
			}
			if len(tr.Observations) != tc.wantObs {
				t.Errorf("read %d observations, want %d", len(tr.Observations), tc.wantObs)
			}
			for i, o := range tr.Observations {
				if !reflect.DeepEqual(o, sample()[i]) {
					t.Errorf("observation %d differs: %s", i, dump(o))
				}
			}
			if tc.wantLine < 0 {
				if tr.Truncation != nil {
					t.Errorf("complete trace reported truncated: %v", tr.Truncation)
				}
				return
			}
			tt := tr.Truncation
			if tt == nil {
				t.Fatal("no truncation reported")
			}
			if tt.Line != tc.wantLine || tt.Bytes != tc.wantBytes || !strings.Contains(tt.String(), tc.why) || tt.Observations != uint64(tc.wantObs) {
				t.Errorf("truncation %+v (%s), want line %d, %d bytes, %q", *tt, tt, tc.wantLine, tc.wantBytes, tc.why)
			}
			want := tr.Observations[len(tr.Observations)-1].At
			if tc.name == "gzip trailer cut" {
				want = 20 * time.Millisecond // the end line was read
			}
			if tr.End.At != want || tr.End.Drained != (tc.name == "gzip trailer cut") {
				t.Errorf("end = %v, want the last observation's %v", tr.End, want)
			}
		})
	}
}

// TestConcurrentObserve writes from many goroutines; every line must come
// out whole.
func TestConcurrentObserve(t *testing.T) {
	var buf bytes.Buffer
	w := writerTo(t, &buf, WriterOptions{})
	const workers, each = 8, 200
	var wg sync.WaitGroup
	for g := range workers {
		wg.Go(func() {
			for i := range each {
				w.Observe(&observe.Observation{Kind: observe.KindEvent, Exchange: uint64(g + 1),
					Event: &observe.Event{Event: mcp.Event{Index: i, Raw: bytes.Repeat([]byte("x"), 100+i)}, Fate: observe.Delivered}})
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, obs := readFrom(t, &buf, "mem")
	next := map[uint64]int{}
	for _, o := range obs {
		if o.Event.Index != next[o.Exchange] {
			t.Fatalf("exchange %d: event %d after %d", o.Exchange, o.Event.Index, next[o.Exchange]-1)
		}
		next[o.Exchange]++
	}
	for g := range workers {
		if next[uint64(g+1)] != each {
			t.Errorf("exchange %d: %d events read, want %d", g+1, next[uint64(g+1)], each)
		}
	}
}

// TestWriteErrorKept checks that a failing file is reported by Close.
func TestWriteErrorKept(t *testing.T) {
	w := writerTo(t, failAfter{}, WriterOptions{})
	for i := range 2000 {
		w.Observe(&observe.Observation{Kind: observe.KindEvent, Event: &observe.Event{Event: mcp.Event{Index: i, Raw: make([]byte, 100)}}})
	}
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Close = %v, want the write error", err)
	}
}

type failAfter struct{}

func (failAfter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestEndLine: a run that was not drained says so, and a reader sees it.
func TestEndLine(t *testing.T) {
	var buf bytes.Buffer
	w := writerTo(t, &buf, WriterOptions{})
	w.Observe(sample()[0])
	if err := w.Finish(End{At: 7 * time.Second, Command: []string{"node", "client.mjs"}, ExitCode: 3}); err != nil {
		t.Fatal(err)
	}
	w.Observe(sample()[1]) // after the end: discarded
	if err := w.Finish(End{At: time.Hour, Drained: true}); err != nil {
		t.Fatal(err)
	}
	r, obs := readFrom(t, &buf, "mem")
	n := len(obs)
	if end, ok := r.End(); !ok || !reflect.DeepEqual(end, End{At: 7 * time.Second, Command: []string{"node", "client.mjs"}, ExitCode: 3}) || n != 1 {
		t.Errorf("end %+v (read %v), %d observations; want 7s not drained, 1 observation", end, ok, n)
	}
}

// TestRedactSessionIDs: redacting Mcp-Session-Id replaces each session id
// by a stand-in wherever the trace names it, the same one each time, so
// that sessions can still be told apart.
func TestRedactSessionIDs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	obs := sample()
	obs = append(obs, &observe.Observation{Kind: observe.KindRequest, Exchange: 9, Session: "s-2", SessionSeq: 2,
		Request: &observe.Request{Method: "GET", Header: http.Header{"Mcp-Session-Id": {"s-2"}}}})
	writeAll(t, path, WriterOptions{RedactHeaders: []string{"mcp-session-id"}}, obs, 0)
	raw, _ := os.ReadFile(path)
	if strings.Contains(string(raw), `"s-1"`) || strings.Contains(string(raw), `"s-2"`) {
		t.Fatalf("a session id is left in the trace:\n%s", raw)
	}
	tr, err := ReadFile(path, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range tr.Observations {
		want := map[string]string{"": "", "s-1": "session-1", "s-2": "session-2"}[obs[i].Session]
		if o.Session != want {
			t.Errorf("observation %d: session %q, want %q", i, o.Session, want)
		}
		if o.Response != nil && o.Response.Session != "" && (o.Response.Session != "session-1" || o.Response.Header.Get("Mcp-Session-Id") != "session-1") {
			t.Errorf("observation %d: response session %q, header %v", i, o.Response.Session, o.Response.Header)
		}
	}
	if got := tr.Observations[len(obs)-1].Request.Header.Get("Mcp-Session-Id"); got != "session-2" {
		t.Errorf("second session's header = %q, want session-2", got)
	}
}

// TestStandInsBounded: the stand-ins of redacted session ids are bounded
// in count (the oldest forgotten past maxStandIns) and in bytes (a long id
// kept by its digest), and an id seen again while remembered keeps its
// stand-in.
func TestStandInsBounded(t *testing.T) {
	r := redactor{sessions: map[string]string{}}
	long := strings.Repeat("x", 60000)
	if a, b := r.session(long+"1"), r.session(long+"1"); a != "session-1" || b != a {
		t.Fatalf("a long id: %q then %q, want session-1 twice", a, b)
	}
	for i := range maxStandIns + 1000 {
		id := "id-" + strconv.Itoa(i+2)
		if i%64 == 0 {
			id = long + id
		}
		r.session(id)
	}
	if n := len(r.sessions); n != maxStandIns {
		t.Errorf("%d stand-ins remembered, want %d", n, maxStandIns)
	}
	size := 0
	for k := range r.sessions {
		size += len(k)
	}
	if size > maxStandIns*maxKeyLen {
		t.Errorf("the remembered keys hold %d bytes", size)
	}
	last := "id-" + strconv.Itoa(maxStandIns+1001)
	if s := r.session(last); s != "session-"+strconv.Itoa(maxStandIns+1001) {
		t.Errorf("the last id seen: %q", s)
	}
	if s := r.session(long + "1"); s == "session-1" {
		t.Errorf("the first id, forgotten, kept its stand-in %q", s)
	}
}

// sizes records the length of each write.
type sizes struct {
	bytes.Buffer
	n []int
}

func (s *sizes) Write(p []byte) (int, error) {
	s.n = append(s.n, len(p))
	return s.Buffer.Write(p)
}

// TestWritesAreWholeChunks: the Writer writes writeSize bytes at a time,
// or a multiple of it after a line longer than that, and keeps less than
// writeSize gathered between observations; Close writes the rest.
func TestWritesAreWholeChunks(t *testing.T) {
	var out sizes
	w := writerTo(t, &out, WriterOptions{})
	for i := range 2000 {
		raw := []byte("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n")
		if i%500 == 7 {
			raw = bytes.Repeat([]byte(`"quoted"`), 40000) // a line of ~480 KiB
		}
		w.Observe(&observe.Observation{Kind: observe.KindEvent, Exchange: 1, Stream: mcp.StreamPost,
			Event: &observe.Event{Event: mcp.Event{Index: i, Raw: raw}}})
		if kept := len(w.e.b); kept >= writeSize {
			t.Fatalf("after observation %d, %d bytes kept", i, kept)
		}
	}
	written := out.Len()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(out.n) < 2 {
		t.Fatalf("%d writes", len(out.n))
	}
	for i, n := range out.n[:len(out.n)-1] {
		if n == 0 || n%writeSize != 0 {
			t.Fatalf("write %d of %d bytes, not a multiple of %d", i, n, writeSize)
		}
	}
	if last := out.n[len(out.n)-1]; out.Len() != written+last || last >= writeSize+200 {
		t.Fatalf("Close wrote %d bytes, %d after %d", last, out.Len(), written)
	}
}

// TestFormatOneNamesAreUnknown: a format 1 trace never recorded the name a
// request's body gives, so its requests read back with the name unknown;
// a format 2 trace's absent name means the body names none.
func TestFormatOneNamesAreUnknown(t *testing.T) {
	const request = `{"kind":"request","at_us":1500,"exchange":1,"stream":"post","protocol":"2026-07-28","request":{"method":"POST","path":"/mcp","header":{"Mcp-Name":["add"]},"messages":[{"kind":"request","method":"tools/call","id":"1"}]}}` + "\n"
	for _, tc := range []struct {
		version string
		unknown bool
	}{{"1", true}, {"2", false}} {
		src := `{"fray_trace":` + tc.version + `,"started":"2026-07-28T10:00:00Z"}` + "\n" + request
		_, o := firstOf(t, strings.NewReader(src), "format-"+tc.version+".jsonl")
		m := o.Request.Messages[0]
		if m.NameUnknown != tc.unknown || m.HasName {
			t.Errorf("format %s: NameUnknown %v, HasName %v; want %v, false", tc.version, m.NameUnknown, m.HasName, tc.unknown)
		}
	}
}

// TestFormatFourLeavesOutWhatIsFoundAgain: format 4 writes an event the
// proxy delivered as it came with no message, no delivered_at_us and no
// delivered_id, and a reader finds all three again; the same members
// absent from a format 3 line still mean no message, no delivery time and
// no id, as they did when it was written. A client that got no id where
// the event had one is said so.
func TestFormatFourLeavesOutWhatIsFoundAgain(t *testing.T) {
	obs := sample()
	note := obs[len(obs)-1]
	// obs[3]'s strip-id fault left the client no id.
	out := string(encodeAll(t, WriterOptions{NoRedact: true}, []*observe.Observation{note, obs[3]}))
	lines := strings.Split(out, "\n")
	for _, m := range []string{`"message"`, `"delivered_at_us"`, `"delivered_id"`} {
		if strings.Contains(lines[1], m) {
			t.Errorf("format 4 wrote %s for an event delivered as it came:\n%s", m, lines[1])
		}
	}
	if !strings.Contains(lines[2], `"delivered_no_id":true`) {
		t.Errorf("the event the client got with no id does not say so:\n%s", lines[2])
	}
	read := func(version string) *observe.Event {
		t.Helper()
		src := strings.Replace(out, fmt.Sprintf(`{"fray_trace":%d,`, Version), `{"fray_trace":`+version+`,`, 1)
		_, o := firstOf(t, strings.NewReader(src), "format-"+version+".jsonl")
		return o.Event
	}
	got, want := read("4"), note.Event
	if got.RPCKind != want.RPCKind || string(got.RPCMethod) != string(want.RPCMethod) || !got.Scanned ||
		got.DeliveredAt != want.DeliveredAt || string(got.DeliveredID) != string(want.DeliveredID) || !got.DeliveredHasID {
		t.Errorf("format 4 read back kind %v method %q scanned %v, delivered at %v with id %q (%v); want %v %q true, %v with %q (true)",
			got.RPCKind, got.RPCMethod, got.Scanned, got.DeliveredAt, got.DeliveredID, got.DeliveredHasID,
			want.RPCKind, want.RPCMethod, want.DeliveredAt, want.DeliveredID)
	}
	old := read("3")
	if old.RPCKind != mcp.RPCNone || old.Scanned || old.DeliveredAt != 0 || old.DeliveredHasID {
		t.Errorf("the same line in format 3 read as kind %v scanned %v, delivered at %v, with an id %v; want none of them",
			old.RPCKind, old.Scanned, old.DeliveredAt, old.DeliveredHasID)
	}
}
