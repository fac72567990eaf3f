package main

import (
	"bytes"
	"os"
	"testing"
)

// TestWantColor: colour only on a terminal, and never with NO_COLOR or CI
// set.
func TestWantColor(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	if wantColor(&bytes.Buffer{}, env()) {
		t.Error("colour into a buffer, which is not a terminal")
	}
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if wantColor(f, env()) {
		t.Error("colour into a regular file")
	}
	// A terminal, where the test has one: /dev/tty may be absent.
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		if !wantColor(tty, env()) {
			t.Error("no colour on a terminal")
		}
		for _, k := range []string{"NO_COLOR", "CI"} {
			if wantColor(tty, env(k, "1")) {
				t.Errorf("colour on a terminal with %s set", k)
			}
		}
	}
}

// TestColorize: the status words, and only they, are coloured.
func TestColorize(t *testing.T) {
	in := "fray: verdict FAIL: a check failed\nclient.reconnects  WARN  1\nserver.x  pass  2\nFAILURE PASSED\n"
	want := "fray: verdict \x1b[1;31mFAIL\x1b[0m: a check failed\nclient.reconnects  \x1b[33mWARN\x1b[0m  1\nserver.x  pass  2\nFAILURE PASSED\n"
	if got := string(colorize([]byte(in))); got != want {
		t.Errorf("colorize:\n%q\nwant\n%q", got, want)
	}
}
