package report

import (
	"bytes"
	"strings"
	"testing"
)

func TestPrintable(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "tools/call ünïcode ✓", "tools/call ünïcode ✓"},
		{"ESC", "\x1b[2Jcleared", `\x1b[2Jcleared`},
		{"OSC 52", "\x1b]52;c;ZXZpbA==\x07", `\x1b]52;c;ZXZpbA==\x07`},
		{"OSC 8", "\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\", `\x1b]8;;http://evil.example\x1b\link\x1b]8;;\x1b\`},
		{"CR", "fail\rfray: verdict PASS", `fail\rfray: verdict PASS`},
		{"LF", "fail\nfray: verdict PASS", `fail\nfray: verdict PASS`},
		{"tab and DEL", "a\tb\x7f", `a\tb\x7f`},
		{"C1 CSI", "\u009b31m", `\u009b31m`},
		{"bidi override", "abc\u202edcb", `abc\u202edcb`},
		{"not UTF-8", "a\xff\xfeb", `a\xff\xfeb`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Printable(tc.in); got != tc.want {
				t.Errorf("Printable(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
	if got := PrintableLines("one\x1b\ntwo\r\n"); got != "one\\x1b\ntwo\\r\n" {
		t.Errorf("PrintableLines = %q", got)
	}
}

// TestSummaryEscapes: a report whose strings carry terminal escapes and
// line breaks (from a trace, a peer or a merged report) is summarised
// with them escaped, and no line of a failed run's summary reads as a
// pass.
func TestSummaryEscapes(t *testing.T) {
	forge := "\x1b]52;c;ZXZpbA==\x07\x1b]8;;http://evil.example\x07x\r\x1b[2Kfray: verdict PASS\nfray: verdict PASS"
	r := Report{
		Schema: 1, Verdict: VerdictFail, Why: "why" + forge, Profile: "p" + forge,
		Checks: []Check{{ID: "e2e.every-request-answered" + forge, Status: StatusFail, Count: 1,
			Evidence: []Evidence{{Message: "message" + forge, Fault: &FaultRef{Kind: "drop" + forge}}}}},
		Faults:   []FaultCount{{Kind: "drop" + forge, Count: 1}},
		Shards:   []Shard{{Profile: "s" + forge, Verdict: VerdictPass + forge, Why: forge}},
		Command:  &Command{Args: []string{"client" + forge}, ExitCode: 1, Error: "err" + forge},
		Baseline: &Baselined{File: "b" + forge, Verdict: VerdictFail, Why: forge},
	}
	var out bytes.Buffer
	if err := WriteSummary(&out, r, SummaryOptions{Verbose: true}); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if i := strings.IndexFunc(s, func(r rune) bool { return r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r < 0xa0 }); i >= 0 {
		t.Errorf("control character %q in the summary:\n%s", s[i], s)
	}
	for line := range strings.Lines(s) {
		if strings.HasPrefix(strings.TrimSpace(line), "fray: verdict PASS") {
			t.Errorf("a failed run's summary has the line %q", line)
		}
	}
	if !strings.Contains(s, `\x1b]52;c;`) || !strings.Contains(s, `\r\x1b[2Kfray: verdict PASS`) {
		t.Errorf("the escapes are not shown:\n%s", s)
	}
	if r.Why != "why"+forge || r.Checks[0].Evidence[0].Message != "message"+forge {
		t.Error("WriteSummary changed the report it was given")
	}
}
