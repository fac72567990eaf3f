package main

import (
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestEveryHelpFitsATerminal: fray --help and every command's --help, at
// every depth, fit one terminal screen, and each shows an example.
func TestEveryHelpFitsATerminal(t *testing.T) {
	paths := append([][]string{nil}, commandPaths(nil, newApp(io.Discard, io.Discard).Commands)...)
	for _, p := range paths {
		args := append(append([]string(nil), p...), "--help")
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, stdout, stderr := runFray(t, quick, args...)
			if code != exitOK || stdout == "" {
				t.Fatalf("exit %d; stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
			if len(lines) > helpLines {
				t.Errorf("%d lines, want at most %d:\n%s", len(lines), helpLines, stdout)
			}
			for _, l := range lines {
				if n := utf8.RuneCountInString(l); n > helpWidth {
					t.Errorf("line of %d columns, want at most %d: %q", n, helpWidth, l)
				}
			}
			if !strings.Contains(stdout, "example:") {
				t.Errorf("no example:\n%s", stdout)
			}
		})
	}
}
