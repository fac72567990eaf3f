package report

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Printable returns s with every character a terminal would act on, rather
// than show, written as a Go escape: C0 controls (ESC, CR, LF, BEL, TAB),
// DEL, C1 controls (CSI, OSC as one byte), the Unicode controls of text
// direction, and bytes that are not UTF-8. A string from a peer, a trace or
// a report shown through it cannot move the cursor, set the clipboard
// (OSC 52), make a link (OSC 8) or start a line of its own ("fray: verdict
// PASS" after a CR or LF). s is returned as it is when it has none.
func Printable(s string) string { return escapeUnprintable(s, false) }

// escapeUnprintable is Printable, leaving LF as it is with keepLines.
func escapeUnprintable(s string, keepLines bool) string {
	i := firstUnprintable(s, keepLines)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	writePrintable(&b, s[i:], keepLines)
	return b.String()
}

// firstUnprintable returns the index of the first character of s that
// Printable escapes, -1 when none; with keepLines, LF is not one.
func firstUnprintable(s string, keepLines bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if escaped(r, n, keepLines) {
			return i
		}
		i += n
	}
	return -1
}

// escaped says whether the rune r, n bytes long, is written as an escape.
func escaped(r rune, n int, keepLines bool) bool {
	switch {
	case r == '\n':
		return !keepLines
	case r == utf8.RuneError && n == 1:
		return true
	case r < 0x20, r >= 0x7f && r < 0xa0:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// writePrintable writes s to b, escaping what Printable escapes; with
// keepLines, LF stays.
func writePrintable(b *strings.Builder, s string, keepLines bool) {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !escaped(r, n, keepLines) {
			b.WriteString(s[i : i+n])
			i += n
			continue
		}
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == utf8.RuneError, r < 0x80:
			fmt.Fprintf(b, `\x%02x`, s[i])
		default:
			fmt.Fprintf(b, `\u%04x`, r)
		}
		i += n
	}
}

// PrintableLines is Printable for text of several lines: LF stays, every
// other character Printable escapes is escaped.
func PrintableLines(s string) string { return escapeUnprintable(s, true) }

// printableWriter passes on what is written to it through PrintableLines:
// the summary's own lines stay lines, and nothing in them reaches the
// terminal as a control.
type printableWriter struct{ w io.Writer }

func (p printableWriter) Write(b []byte) (int, error) {
	if firstUnprintable(string(b), true) < 0 {
		return p.w.Write(b)
	}
	if _, err := p.w.Write([]byte(PrintableLines(string(b)))); err != nil {
		return 0, err
	}
	return len(b), nil
}

// printable returns a copy of r whose free text, which a peer, a trace or
// a merged report wrote, is escaped with Printable, for a summary: one
// line each stays one line.
func printable(r Report) Report {
	r.Profile, r.Why, r.Verdict, r.Shortfall = Printable(r.Profile), Printable(r.Why), Printable(r.Verdict), Printable(r.Shortfall)
	if c := r.Command; c != nil {
		cp := *c
		cp.Error = Printable(c.Error)
		r.Command = &cp
	}
	r.Shards = append([]Shard(nil), r.Shards...)
	for i := range r.Shards {
		s := &r.Shards[i]
		s.Profile, s.Verdict, s.Why = Printable(s.Profile), Printable(s.Verdict), Printable(s.Why)
	}
	r.Faults = append([]FaultCount(nil), r.Faults...)
	for i := range r.Faults {
		r.Faults[i].Kind = Printable(r.Faults[i].Kind)
	}
	r.Checks = append([]Check(nil), r.Checks...)
	for i := range r.Checks {
		c := &r.Checks[i]
		c.ID, c.Status = Printable(c.ID), Printable(c.Status)
		c.Excused = append([]Excuse(nil), c.Excused...)
		for j := range c.Excused {
			c.Excused[j].Reason = Printable(c.Excused[j].Reason)
		}
		c.Evidence = append([]Evidence(nil), c.Evidence...)
		for j := range c.Evidence {
			e := &c.Evidence[j]
			e.Message = Printable(e.Message)
			if e.Fault != nil {
				f := *e.Fault
				f.Kind = Printable(f.Kind)
				e.Fault = &f
			}
		}
	}
	if b := r.Baseline; b != nil {
		cp := *b
		cp.File, cp.Verdict, cp.Why = Printable(b.File), Printable(b.Verdict), Printable(b.Why)
		r.Baseline = &cp
	}
	return r
}
