package main

import (
	"bytes"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// TestDemo runs fray demo in-process: it narrates the faults it injected
// and the clients' reconnections, both clients finish, the verdict is
// printed and is the exit code, and it ends with what to try next, every
// line within demoWidth. Messages may wrap, so a space in them matches
// any run of white space.
func TestDemo(t *testing.T) {
	code, stdout, stderr := runFray(t, 60*time.Second, "demo")
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^ +[0-9.]+s  session \d  exchange \d+ +POST tools/call +fault\s+1\s+\(close\)\s+on\s+the\s+priming\s+event\s+\(id\s+"[^"]+"\)`),
		regexp.MustCompile(`(?m)^ +[0-9.]+s  session \d  exchange \d+ +GET resume +client\s+reconnects\s+with\s+Last-Event-ID\s+"[^"]+",\s+resuming\s+exchange\s+\d+\s`),
		regexp.MustCompile(`(?m)^session \d: the client got "counted to 8"`),
		regexp.MustCompile(`(?m)^fray: verdict (PASS|FAIL) \(profile polling-server, seed 1, `),
	} {
		if !want.MatchString(stdout) {
			t.Errorf("output lacks %s:\n%s\nstderr:\n%s", want, stdout, stderr)
		}
	}
	if code != exitOK {
		t.Errorf("exit %d, want the pass of a pair that recovers; stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for line := range strings.Lines(stdout) {
		if n := utf8.RuneCountInString(strings.TrimSuffix(line, "\n")); n > demoWidth {
			t.Errorf("line of %d columns, want at most %d: %q", n, demoWidth, line)
		}
	}
	next := "\nnext: fray demo --profile lossy-resume (fray profiles list names them all)\n" +
		"      fray demo --html demo.html, then open demo.html: this run as a timeline\n" +
		"      fray proxy --upstream URL, for your own server (README.md, docs/cli.md)\n"
	if !strings.HasSuffix(stdout, next) {
		t.Errorf("output does not end with what to try next:\n%s", stdout)
	}
}

// TestWriteWrapped: a long message wraps at spaces under itself; a word
// longer than a line stays whole.
func TestWriteWrapped(t *testing.T) {
	var buf bytes.Buffer
	head := strings.Repeat("h", 90) + " "
	writeWrapped(&buf, head, "  ", "one two three "+strings.Repeat("w", 120)+" end")
	want := head + "one two\n  three\n  " + strings.Repeat("w", 120) + "\n  end\n"
	if buf.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", buf.String(), want)
	}
	if got := shortID("GQ72ABCDEFGHIJKLMNOPQRSTUV_12"); got != "GQ72…_12" {
		t.Errorf("shortID: %q", got)
	}
	if got := shortID("short_1"); got != "short_1" {
		t.Errorf("shortID: %q", got)
	}
}

// TestDemoView feeds the narrator a cut stream and its resumption.
func TestDemoView(t *testing.T) {
	var buf bytes.Buffer
	v := newDemoView(&buf)
	call := observe.Message{Kind: mcp.RPCRequest, Method: "tools/call", ID: "2"}
	obs := []*observe.Observation{
		{Kind: observe.KindRequest, At: 10 * time.Millisecond, Exchange: 5, Stream: mcp.StreamPost, Session: "s", SessionSeq: 1,
			Request: &observe.Request{Method: http.MethodPost, Messages: []observe.Message{call}}},
		{Kind: observe.KindEvent, At: 11 * time.Millisecond, Exchange: 5, Stream: mcp.StreamPost, SessionSeq: 1,
			Fired: []faults.Firing{{Index: 0, Kind: "set-retry"}, {Index: 1, Kind: "close"}},
			Event: &observe.Event{Event: mcp.Event{Parsed: true, HasID: true, ID: []byte("a_0"), Priming: true}, Fate: observe.Delivered, DeliveredHasID: true, DeliveredID: []byte("a_0"), DeliveredHasRetry: true, DeliveredRetry: 500, Copies: 1}},
		{Kind: observe.KindEnd, At: 12 * time.Millisecond, Exchange: 5, Stream: mcp.StreamPost, SessionSeq: 1,
			End: &observe.End{Cause: observe.FaultClosed}},
		{Kind: observe.KindRequest, At: 520 * time.Millisecond, Exchange: 6, Stream: mcp.StreamResume, SessionSeq: 1,
			Request: &observe.Request{Method: http.MethodGet, HasLastEventID: true, LastEventID: "a_0"}},
		{Kind: observe.KindEvent, At: 521 * time.Millisecond, Exchange: 6, Stream: mcp.StreamResume, SessionSeq: 1,
			Event: &observe.Event{Event: mcp.Event{Parsed: true, HasID: true, ID: []byte("a_1"), RPCKind: mcp.RPCResponse, RPCID: []byte("2")}, Fate: observe.Delivered, DeliveredHasID: true, DeliveredID: []byte("a_1"), Copies: 1}},
		{Kind: observe.KindEnd, At: 522 * time.Millisecond, Exchange: 6, Stream: mcp.StreamResume, SessionSeq: 1,
			End: &observe.End{Cause: observe.Complete}},
	}
	for _, o := range obs {
		v.Observe(o)
	}
	// Each message wraps under itself to keep within demoWidth.
	const under = "                                                     "
	want := []string{
		`    0.010s  session 1  exchange 5   POST tools/call  client calls the tool`,
		`    0.011s  session 1  exchange 5   POST tools/call  fault 0 (set-retry), fault 1 (close) on the`,
		under + `priming event (id "a_0"): delivered with retry`,
		under + `500ms`,
		`    0.012s  session 1  exchange 5   POST tools/call  fray closed the stream after 1 event, last id`,
		under + `"a_0"`,
		`    0.520s  session 1  exchange 6   GET resume       client reconnects with Last-Event-ID "a_0",`,
		under + `resuming exchange 5 508ms after its stream`,
		under + `ended (retry was 500ms)`,
		`    0.521s  session 1  exchange 6   GET resume       the response reaches the client on the resumed`,
		under + `stream (event 1 of this stream)`,
		`    0.522s  session 1  exchange 6   GET resume       the stream ended with the response after 1`,
		under + `event, last id "a_1"`,
	}
	got := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("narration:\n%s\nwant:\n%s", buf.String(), strings.Join(want, "\n"))
	}
	if v.sessionSeq("s") != 1 {
		t.Errorf("session s is number %d, want 1", v.sessionSeq("s"))
	}
}

// TestDemoClientFails: when the clients cannot finish (here fray answers
// every tools/call with 503), the demo says so and exits 3.
func TestDemoClientFails(t *testing.T) {
	prof := writeFile(t, filepath.Join(t.TempDir(), "refuse.toml"), "[[fault]]\nkind = \"status\"\nrequest_method = \"tools/call\"\nstatus = 503\n")
	code, stdout, stderr := runFray(t, 60*time.Second, "demo", "--profile", prof)
	want := exitCommand
	if strings.Contains(stdout, "fray: verdict FAIL") && strings.Contains(stdout, "  why: failed: ") {
		want = exitFindings
	}
	if code != want || !strings.Contains(stdout, "a client of the demo failed: ") || strings.Contains(stdout, "verdict PASS") {
		t.Errorf("exit %d, want %d saying a client failed, never PASS; stdout:\n%s\nstderr:\n%s", code, want, stdout, stderr)
	}
	if !strings.Contains(stdout, "fault 0 (status) on the request") || !strings.Contains(stdout, ": FAILED: ") {
		t.Errorf("output:\n%s", stdout)
	}
}
