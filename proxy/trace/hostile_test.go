package trace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostileTraces returns traces built to break a reader, by name: each
// from a good trace of sample() with one thing wrong. good is that trace.
// Line numbers count from 1, the header's.
func hostileTraces(good []byte) []hostileTrace {
	lines := bytes.SplitAfter(good, []byte("\n"))
	swap := func(old, new string) []byte {
		if !bytes.Contains(good, []byte(old)) {
			panic("the sample trace has no " + old)
		}
		return bytes.Replace(good, []byte(old), []byte(new), 1)
	}
	insert := func(at int, line string) []byte {
		var b []byte
		b = append(b, bytes.Join(lines[:at-1], nil)...)
		b = append(b, line...)
		return append(b, bytes.Join(lines[at-1:], nil)...)
	}
	return []hostileTrace{
		{"version 0", swap(fmt.Sprintf(`{"fray_trace":%d,`, Version), `{"fray_trace":0,`), ErrNotTrace, 1, "format version 0"},
		{"negative version", swap(fmt.Sprintf(`{"fray_trace":%d,`, Version), `{"fray_trace":-1,`), ErrNotTrace, 1, "format version -1"},
		{"version as a string", swap(fmt.Sprintf(`{"fray_trace":%d,`, Version), `{"fray_trace":"1",`), ErrNotTrace, 1, "not a fray trace"},
		{"version past int64", swap(fmt.Sprintf(`{"fray_trace":%d,`, Version), `{"fray_trace":99999999999999999999,`), ErrNotTrace, 1, "not a fray trace"},
		{"version far newer", swap(fmt.Sprintf(`{"fray_trace":%d,`, Version), `{"fray_trace":2147483647,`), ErrNewer, 1, "newer"},
		{"start time not a time", swap(`"started":"2025-11-25T10:00:00.123456789Z"`, `"started":"yesterday"`), ErrSyntax, 1, `started "yesterday"`},
		{"NaN time", swap(`"at_us":4000`, `"at_us":NaN`), ErrSyntax, 4, "not a JSON object"},
		{"infinite time", swap(`"at_us":4000`, `"at_us":1e400`), ErrSyntax, 4, "not a JSON object"},
		{"time past int64", swap(`"at_us":4000`, `"at_us":9223372036854775808`), ErrSyntax, 4, "not a JSON object"},
		{"time as a string", swap(`"at_us":4000`, `"at_us":"4000"`), ErrSyntax, 4, "not a JSON object"},
		{"fractional time", swap(`"at_us":4000`, `"at_us":4000.5`), ErrSyntax, 4, "not a JSON object"},
		{"bad base64", swap(`"id_b64":"//4="`, `"id_b64":"!!not base64"`), ErrSyntax, 6, "id_b64"},
		{"base64 of the wrong alphabet", swap(`"id_b64":"//4="`, `"id_b64":"__4="`), ErrSyntax, 6, "id_b64"},
		{"raw_parts of two parts", swap(`,"\t\n\n"]`, `]`), ErrSyntax, 5, "raw_parts has 2 parts, want 3"},
		{"raw_parts with a number before the message", swap(`"raw_parts":["event: message\nid: 2\ndata:  "`, `"raw_parts":[17`), ErrSyntax, 5, "raw_parts[0] is 17"},
		{"raw_parts with a string for the message", swap(`,{"jsonrpc":"2.0","id":0,"result":{}},`, `,"x",`), ErrSyntax, 5, `raw_parts[1] is "x"`},
		{"raw_parts and raw", swap(`"raw_parts":[`, `"raw":"x","raw_parts":[`), ErrSyntax, 5, "both raw_parts and raw"},
		{"unknown kind", swap(`"kind":"end","at_us":10000`, `"kind":"exit","at_us":10000`), ErrSyntax, 9, `kind "exit"`},
		{"kind without its member", swap(`"end":{"cause":"fault-closed"}`, `"ended":{}`), ErrSyntax, 9, "without its end member"},
		{"exchange past uint64", swap(`"exchange":4,`, `"exchange":18446744073709551616,`), ErrSyntax, 14, "not a JSON object"},
		{"NUL bytes", insert(3, "\x00\x00\x00\n"), ErrSyntax, 3, "not a JSON object"},
		{"nesting ten thousand deep", insert(3, strings.Repeat("[", 100000)+"\n"), ErrSyntax, 3, "not a JSON object"},
		{"a JSON array", insert(3, "[1,2,3]\n"), ErrSyntax, 3, "not a JSON object"},
		{"a second header", insert(3, string(lines[0])), ErrSyntax, 3, "a second header line"},
		{"a line after the end", append(bytes.Clone(good), lines[1]...), ErrSyntax, len(lines), "after the end line"},
		{"end line miscounts", swap(`"observations":16`, `"observations":17`), ErrSyntax, len(lines) - 1, "counts 17 observations"},
		{"first line longer than a header", append(bytes.Repeat([]byte("a"), maxHeaderLine+1<<20), '\n'), ErrNotTrace, 0, "hold no line"},
	}
}

// hostileTrace is a trace the reader must refuse: with an *Error that
// wraps sentinel, at line (0: no line; -1: any), saying msg.
type hostileTrace struct {
	name     string
	data     []byte
	sentinel error
	line     int
	msg      string
}

// refuse reads each trace from a file and requires the refusal it names,
// the file named in the error; but for a cut trace, a partial read
// refuses it too.
func refuse(t *testing.T, traces []hostileTrace) {
	for _, tc := range traces {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.jsonl")
			writeFile(t, path, tc.data)
			_, err := ReadFile(path, ReadOptions{})
			var te *Error
			if !errors.As(err, &te) || !errors.Is(err, tc.sentinel) {
				t.Fatalf("err = %v, want an *Error wrapping %v", err, tc.sentinel)
			}
			if te.File != path || tc.line >= 0 && te.Line != tc.line {
				t.Errorf("error at %s:%d, want %s:%d: %v", te.File, te.Line, path, tc.line, err)
			}
			if !strings.Contains(err.Error(), tc.msg) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name the file and %q", err, tc.msg)
			}
			if _, perr := ReadFile(path, ReadOptions{Partial: true}); tc.sentinel != ErrTruncated && !errors.Is(perr, tc.sentinel) {
				t.Errorf("a partial read: %v, want the same refusal", perr)
			}
		})
	}
}

// TestHostileTraces reads traces made to break the reader: versions that
// are no version, times that are no time (NaN, past int64), bad base64,
// unknown kinds, a nesting bomb, NUL bytes, lines out of place, and a
// first line longer than a header may be. Each is refused with an *Error
// that names the file and the line and wraps the right sentinel; none
// panics or reads on past the problem.
func TestHostileTraces(t *testing.T) {
	refuse(t, hostileTraces(traceBytes(t, false)))
}

// TestLineLongerThanMaxLine: an observation line past MaxLine is refused
// at its line once MaxLine bytes are read, not read whole.
func TestLineLongerThanMaxLine(t *testing.T) {
	good := traceBytes(t, false)
	header := good[:bytes.IndexByte(good, '\n')+1]
	src := io.MultiReader(bytes.NewReader(header), strings.NewReader(`{"kind":"event","raw":"`), endless('x'))
	r, err := NewReader(src, "long.jsonl", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Next()
	var te *Error
	if !errors.As(err, &te) || !errors.Is(err, ErrSyntax) || te.Line != 2 || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("err = %v, want a syntax error at line 2 saying the line is too long", err)
	}
}

// endless reads as the same byte forever.
type endless byte

func (e endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(e)
	}
	return len(p), nil
}

// writeFile writes data to path, failing the test on an error.
func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
