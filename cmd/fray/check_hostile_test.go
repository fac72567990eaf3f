package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// goodTrace is a small whole trace: one POST stream with one event.
const goodTrace = `{"fray_trace":1,"started":"2025-11-25T10:00:00Z","profile":"p","seed":1,"profile_text":"name = \"p\"\n"}
{"kind":"request","at_us":1500,"exchange":1,"stream":"post","session":"s-1","session_seq":1,"request":{"method":"POST","path":"/mcp","messages":[{"kind":"request","method":"tools/call","id":"1"}]}}
{"kind":"response","at_us":3000,"exchange":1,"stream":"post","session":"s-1","session_seq":1,"response":{"status":200,"origin":"upstream","event_stream":true,"session":"s-1"}}
{"kind":"event","at_us":4000,"exchange":1,"stream":"post","session":"s-1","session_seq":1,"event":{"index":0,"raw_b64":"aWQ6IP/+CgoK","parsed":true,"id_b64":"//4=","fate":"delivered","delivered_at_us":4000,"copies":1}}
{"kind":"end","at_us":10000,"exchange":1,"stream":"post","end":{"cause":"complete"}}
{"fray_trace_end":1,"at_us":20000,"observations":4,"drained":true}
`

// TestCheckHostileTraces runs fray check on traces made to break it.
// Malformed ones exit 2 with the file and the line of the problem;
// well-formed ones whose values make no sense (times before the run or
// going back, indexes and counters at their largest, events of exchanges
// never opened) are judged without a panic, within seconds.
func TestCheckHostileTraces(t *testing.T) {
	dir := t.TempDir()
	swap := func(old, new string) string {
		if !strings.Contains(goodTrace, old) {
			t.Fatalf("the good trace has no %s", old)
		}
		return strings.Replace(goodTrace, old, new, 1)
	}
	for _, tc := range []struct {
		name, trace string
		line        int // where a malformed trace is refused; 0 for a well-formed one
	}{
		{"the good trace itself", goodTrace, 0},
		{"version 0", swap(`{"fray_trace":1,`, `{"fray_trace":0,`), 1},
		{"NaN time", swap(`"at_us":4000`, `"at_us":NaN`), 4},
		{"time past int64", swap(`"at_us":4000`, `"at_us":1e30`), 4},
		{"bad base64", swap(`"id_b64":"//4="`, `"id_b64":"*"`), 4},
		{"nesting bomb", swap(`"request":{`, strings.Repeat(`"request":{`, 1)+strings.Repeat("[", 50000)), 2},
		{"status 1000", swap(`"status":200`, `"status":1000`), 3},
		{"NUL bytes", swap(`"kind":"end"`, "\x00\"kind\":\"end\""), 5},
		{"a second header", strings.Replace(goodTrace, "\n", "\n"+goodTrace[:strings.Index(goodTrace, "\n")+1], 1), 2},
		{"cut mid-line", goodTrace[:len(goodTrace)*2/3], 4},
		{"negative times", strings.ReplaceAll(goodTrace, `"at_us":`, `"at_us":-`), 0},
		{"time going back", swap(`"at_us":10000`, `"at_us":1`), 0},
		{"largest index and counters", swap(`"index":0`, `"index":9223372036854775807`), 0},
		{"largest exchange", strings.ReplaceAll(goodTrace, `"exchange":1,`, `"exchange":18446744073709551615,`), 0},
		{"largest session sequence", strings.ReplaceAll(goodTrace, `"session_seq":1`, `"session_seq":9223372036854775807`), 0},
		{"an event of no exchange", swap(`"exchange":1,"stream":"post","session":"s-1","session_seq":1,"event"`, `"exchange":77,"stream":"get","event"`), 0},
		{"huge retry and copies", swap(`"copies":1`, `"copies":2147483647,"retry":9223372036854775807`), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".jsonl"), tc.trace)
			started := time.Now()
			code, _, stderr := runFray(t, quick, "check", path)
			if took := time.Since(started); took > 10*time.Second {
				t.Errorf("fray check took %v", took)
			}
			if tc.line == 0 {
				if code == exitUsage {
					t.Errorf("a well-formed trace refused: exit %d\n%s", code, stderr)
				}
				return
			}
			at := path + ":" + strconv.Itoa(tc.line) + ":"
			if code != exitUsage || !strings.Contains(stderr, at) {
				t.Errorf("exit %d, want %d; stderr does not say %q:\n%s", code, exitUsage, at, stderr)
			}
		})
	}
}

// TestCheckHostileProfile: a gzipped trace of a few KiB whose header holds
// a profile nested tens of thousands of keys deep is refused at once, with
// the reason, and without the memory decoding it would take.
func TestCheckHostileProfile(t *testing.T) {
	text := strings.Repeat("a.", 30000) + "a = 1\n"
	header := fmt.Sprintf(`{"fray_trace":1,"started":"2025-11-25T10:00:00Z","profile":"p","seed":1,"profile_text":%q}`, text)
	rest := goodTrace[strings.Index(goodTrace, "\n"):]
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = io.WriteString(zw, header+rest)
	_ = zw.Close()
	if gz.Len() > 3<<10 {
		t.Fatalf("the trace is %d bytes gzipped, want at most 3 KiB", gz.Len())
	}
	path := writeFile(t, filepath.Join(t.TempDir(), "deep.jsonl.gz"), string(gz.Bytes()))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	started := time.Now()
	code, _, stderr := runFray(t, quick, "check", path)
	took := time.Since(started)
	runtime.ReadMemStats(&after)
	t.Logf("a %d-byte gzipped trace with a %d-byte profile: refused in %v, %d KiB allocated", gz.Len(), len(text), took, (after.TotalAlloc-before.TotalAlloc)>>10)
	if code != exitUsage || !strings.Contains(stderr, "nest more than 32 deep") {
		t.Errorf("exit %d, want %d saying how deep the profile nests:\n%s", code, exitUsage, stderr)
	}
	if took > time.Second {
		t.Errorf("fray check took %v, want well under a second", took)
	}
	if used := after.TotalAlloc - before.TotalAlloc; used > 100<<20 {
		t.Errorf("fray check allocated %d MiB, want under 100", used>>20)
	}
}

// TestCheckEscapesTerminalControls: fray check of a trace whose strings
// carry terminal escapes (OSC 52 to set the clipboard, OSC 8 links, CSI,
// a CR and an LF before a forged verdict line) shows them escaped, and its
// one verdict line is its own; fray report merge of failed reports that
// carry them prints no line that reads as a pass.
func TestCheckEscapesTerminalControls(t *testing.T) {
	forge := `\u001b]52;c;ZXZpbA==\u0007\u001b]8;;http://evil.example\u0007x\u001b[2J\r\u001b[2Kfray: verdict FAIL\nfray: verdict FAIL\u009b31m`
	tr := strings.Replace(goodTrace, `"profile":"p"`, `"profile":"p`+forge+`"`, 1)
	tr = strings.Replace(tr, `"method":"tools/call","id":"1"`, `"method":"tools/call`+forge+`","id":"1`+forge+`"`, 1)
	dir := t.TempDir()
	path := writeFile(t, filepath.Join(dir, "escapes.jsonl"), tr)
	code, stdout, stderr := runFray(t, quick, "check", path, "-v")
	if code == exitUsage {
		t.Fatalf("exit %d, a refused trace:\n%s", code, stderr)
	}
	out := stdout + stderr
	noControls(t, out)
	if n := strings.Count("\n"+out, "\nfray: verdict "); n != 1 {
		t.Errorf("%d lines start \"fray: verdict\", want 1:\n%s", n, out)
	}
	if !strings.Contains(out, `p\x1b]52;c;ZXZpbA==\x07`) {
		t.Errorf("the profile's name is not shown escaped:\n%s", out)
	}

	sample := readFile(t, "../../proxy/report/testdata/sample.json")
	pass := strings.ReplaceAll(forge, "FAIL", "PASS")
	hostile := bytes.Replace(sample, []byte(`"profile": "polling-server"`), []byte(`"profile": "polling-server`+pass+`"`), 1)
	hostile = bytes.Replace(hostile, []byte(`"message": "reconnected`), []byte(`"message": "`+pass+`reconnected`), 1)
	if bytes.Count(hostile, []byte(pass)) != 2 || !bytes.Contains(sample, []byte(`"verdict": "fail"`)) {
		t.Fatal("the sample report is not a failed one with a profile and evidence to forge")
	}
	a := writeFile(t, filepath.Join(dir, "a.json"), string(hostile))
	b := writeFile(t, filepath.Join(dir, "b.json"), string(hostile))
	code, stdout, stderr = runFray(t, quick, "report", "merge", a, b, "-v")
	out = stdout + stderr
	if code != exitFindings {
		t.Fatalf("merge: exit %d, want %d:\n%s", code, exitFindings, out)
	}
	noControls(t, out)
	for line := range strings.Lines(out) {
		if strings.HasPrefix(strings.TrimSpace(line), "fray: verdict PASS") {
			t.Errorf("a failed run printed %q", line)
		}
	}
	if !strings.Contains(out, `\rfray: verdict PASS`) && !strings.Contains(out, `\r\x1b[2Kfray: verdict PASS`) {
		t.Errorf("the forged line is not shown escaped:\n%s", out)
	}
}

// noControls fails t when out holds a character a terminal acts on.
func noControls(t *testing.T, out string) {
	t.Helper()
	if i := strings.IndexFunc(out, func(r rune) bool { return r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r < 0xa0 }); i >= 0 {
		t.Errorf("control character %q in the output:\n%s", out[i], out)
	}
}

// TestReplayStatusOutOfRange: fray replay of a trace with a response
// status outside 100-599 refuses it with the file and line, before it
// serves anything (net/http panics on writing such a status).
func TestReplayStatusOutOfRange(t *testing.T) {
	path := writeFile(t, filepath.Join(t.TempDir(), "status.jsonl"), strings.Replace(goodTrace, `"status":200`, `"status":1000`, 1))
	code, _, stderr := runFray(t, quick, "replay", path, "--listen", "127.0.0.1:0")
	if at := path + ":3:"; code != exitUsage || !strings.Contains(stderr, at) || !strings.Contains(stderr, "outside 100-599") {
		t.Errorf("exit %d, want %d naming %s and the range:\n%s", code, exitUsage, at, stderr)
	}
}
