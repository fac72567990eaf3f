package main

import (
	"bytes"
	"io"
	"regexp"
)

// wantColor reports whether the summary written to w is coloured: only on
// a terminal, and never when NO_COLOR (https://no-color.org) or CI is set,
// as CI logs keep escape codes as noise.
func wantColor(w io.Writer, getenv func(string) string) bool {
	if getenv("NO_COLOR") != "" || getenv("CI") != "" {
		return false
	}
	return isTerminal(w)
}

// statusWords are the summary's words that need attention, with the ANSI
// colour each gets.
var (
	statusWords  = regexp.MustCompile(`\b(FAILED|FAIL|WARN|PASS|INCONCLUSIVE)\b`)
	statusColors = map[string]string{
		"FAIL": "\x1b[1;31m", "FAILED": "\x1b[1;31m", "WARN": "\x1b[33m", "INCONCLUSIVE": "\x1b[33m", "PASS": "\x1b[32m",
	}
)

// colorize wraps each status word of text in its colour.
func colorize(text []byte) []byte {
	return statusWords.ReplaceAllFunc(text, func(w []byte) []byte {
		return bytes.Join([][]byte{[]byte(statusColors[string(w)]), w, []byte("\x1b[0m")}, nil)
	})
}
