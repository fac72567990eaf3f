package report_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/report"
)

func TestProgressPlainLines(t *testing.T) {
	var buf bytes.Buffer
	p := &report.Progress{W: &buf, Every: 10 * time.Second}
	var drawn []string
	for _, s := range []int{0, 5, 10, 12, 19, 20, 31} {
		ok, err := p.Update(report.Live{Elapsed: time.Duration(s) * time.Second, Events: s})
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			drawn = append(drawn, fmt.Sprint(s))
		}
	}
	if got := strings.Join(drawn, ","); got != "10,20,31" {
		t.Errorf("lines at %s s, want 10,20,31", got)
	}
	if strings.Contains(buf.String(), "\r") || strings.Count(buf.String(), "\n") != 3 {
		t.Errorf("output %q, want three plain lines", buf.String())
	}
	fmt.Fprintf(p, "other\n")
	if !strings.HasSuffix(buf.String(), "31 events, 0 faults, 0 findings\nother\n") {
		t.Errorf("output %q", buf.String())
	}
}

func TestProgressTerminal(t *testing.T) {
	var buf bytes.Buffer
	p := &report.Progress{W: &buf, Terminal: true}
	if p.Interval() != report.DefaultRedraw {
		t.Errorf("interval %v", p.Interval())
	}
	step := func(ms int) bool {
		ok, err := p.Update(report.Live{Elapsed: time.Duration(ms) * time.Millisecond, Exchanges: ms})
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !step(0) || step(100) || !step(250) {
		t.Error("want a redraw at once, none 100ms later, one at 250ms")
	}
	if strings.Contains(buf.String(), "\n") || strings.Count(buf.String(), "\r\x1b[K") != 2 {
		t.Errorf("terminal output %q, want two in-place redraws", buf.String())
	}
	buf.Reset()
	fmt.Fprintf(p, "a log line\n")
	if got, want := buf.String(), "\r\x1b[Ka log line\nfray 0s: 250 exchanges, 0 events, 0 faults, 0 findings"; got != want {
		t.Errorf("other output:\n%q\nwant\n%q", got, want)
	}
	buf.Reset()
	fmt.Fprintf(p, "prompt: ")
	if step(1000) {
		t.Error("redrew over an unfinished line")
	}
	fmt.Fprintf(p, "done\n")
	buf.Reset()
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "\r\x1b[K" {
		t.Errorf("Stop wrote %q, want the line erased", buf.String())
	}
	if step(5000) {
		t.Error("drew after Stop")
	}
	buf.Reset()
	fmt.Fprintf(p, "summary\n")
	if buf.String() != "summary\n" {
		t.Errorf("after Stop: %q", buf.String())
	}
}

// TestProgressAround: output to another stream of the terminal (stdout)
// also erases the line first and draws it again after.
func TestProgressAround(t *testing.T) {
	var term, stdout bytes.Buffer
	p := &report.Progress{W: &term, Terminal: true}
	if _, err := p.Update(report.Live{Events: 3}); err != nil {
		t.Fatal(err)
	}
	term.Reset()
	fmt.Fprintf(p.Around(&stdout), "client output\n")
	if stdout.String() != "client output\n" {
		t.Errorf("stdout %q", stdout.String())
	}
	if want := "\r\x1b[Kfray 0s: 0 exchanges, 3 events, 0 faults, 0 findings"; term.String() != want {
		t.Errorf("terminal %q, want %q", term.String(), want)
	}
	plain := &report.Progress{W: &term}
	if plain.Around(&stdout) != &stdout {
		t.Error("Around wraps a writer when not on a terminal")
	}
}
