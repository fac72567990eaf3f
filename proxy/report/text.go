package report

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// FormatEvidence renders one piece of evidence on one line: when, where
// (instance, session, exchange and the related ones, event ids), the fault
// that set it up, and the message.
func FormatEvidence(e Evidence) string { return evidenceWhere(e, true) + ": " + e.Message }

// shortEvidence puts the message first, the cause, and where it was seen
// after it, for the summary.
func shortEvidence(e Evidence) string { return e.Message + " (" + evidenceWhere(e, false) + ")" }

// evidenceWhere says when and where e was seen and the fault that set it
// up; with related, the related exchanges and the event ids too.
func evidenceWhere(e Evidence, related bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "at %s", msDuration(e.AtMS))
	if e.Instance > 0 {
		fmt.Fprintf(&b, ", instance %d", e.Instance)
	}
	if e.Session > 0 {
		fmt.Fprintf(&b, ", session %d", e.Session)
	}
	if e.Exchange > 0 {
		fmt.Fprintf(&b, ", exchange %d", e.Exchange)
	}
	if related && len(e.Related) > 0 {
		b.WriteString(" (related")
		for i, x := range e.Related {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, " %d", x)
		}
		b.WriteByte(')')
	}
	if related && len(e.EventIDs) > 0 {
		fmt.Fprintf(&b, ", event ids %q", e.EventIDs)
	}
	if e.Fault != nil {
		fmt.Fprintf(&b, ", after fault %d (%s)", e.Fault.Index, e.Fault.Kind)
	}
	return b.String()
}

// msDuration renders milliseconds as a Go duration ("1.204s").
func msDuration(ms int64) string {
	return (time.Duration(ms) * time.Millisecond).String()
}

// summaryWidth is the width the summary wraps evidence to when
// SummaryOptions.Width does not say.
const summaryWidth = 100

// minEvidenceWidth is the least width evidence is wrapped to, however
// narrow the terminal.
const minEvidenceWidth = 40

// evidenceIndent is how far the evidence under a check's row is indented.
const evidenceIndent = "    "

// SummaryOptions say how much WriteSummary shows. The zero value shows
// the checks that need attention and counts the others.
type SummaryOptions struct {
	// Verbose lists every check in the table, those that passed or were
	// skipped too.
	Verbose bool
	// Width is the width, in columns, the evidence is wrapped to: the
	// terminal's; 0 means 100.
	Width int
}

// WriteSummary writes the human summary of r: how the wrapped command
// ended, the verdict line with its reason, the totals, the faults fired,
// the checks counted by status, then a table of the checks that failed or
// warned (of every check with opts.Verbose) with their status and count,
// each failed or warned check's first evidence whole under its row,
// wrapped to opts.Width.
func WriteSummary(w io.Writer, r Report, opts SummaryOptions) error {
	// A peer, a trace or a merged report wrote much of r: it reaches the
	// terminal escaped (see Printable).
	r = printable(r)
	ew := &errWriter{w: printableWriter{w}}
	writeHead(ew, r)
	if len(r.Checks) == 0 {
		fmt.Fprintln(ew, "  no checks ran")
		return ew.err
	}
	var rows []Check
	for _, c := range r.Checks {
		if opts.Verbose || c.Status == StatusFail || c.Status == StatusWarn {
			rows = append(rows, c)
		}
	}
	line := "  checks: " + statusCounts(r.Checks)
	if !opts.Verbose && len(rows) < len(r.Checks) {
		line += " (-v lists every check)"
	}
	fmt.Fprintln(ew, line)
	writeBounds(ew, r)
	if len(rows) > 0 {
		fmt.Fprintln(ew)
		writeTable(ew, rows, opts.Width)
	}
	return ew.err
}

// writeHead writes what the summary says before the checks.
func writeHead(ew io.Writer, r Report) {
	if c := r.Command; c != nil {
		if c.Failed() {
			fmt.Fprintf(ew, "fray: the client command %q FAILED: %s\n", strings.Join(c.Args, " "), c.describe())
		} else {
			fmt.Fprintf(ew, "fray: the client command %q exited 0\n", strings.Join(c.Args, " "))
		}
	}
	verdict := strings.ToUpper(r.Verdict)
	if verdict == "" {
		verdict = "NONE"
	}
	fmt.Fprintf(ew, "fray: verdict %s", verdict)
	var about []string
	if r.Profile != "" {
		about = append(about, fmt.Sprintf("profile %s, seed %d", r.Profile, r.Seed))
	}
	about = append(about, msDuration(r.DurationMS)+" observed")
	if r.Merged > 0 {
		about = append(about, fmt.Sprintf("%d reports merged", r.Merged))
	}
	if r.Partial {
		about = append(about, "snapshot")
	}
	fmt.Fprintf(ew, " (%s)\n", strings.Join(about, ", "))
	if r.Why != "" {
		fmt.Fprintf(ew, "  why: %s\n", r.Why)
	}
	if r.Accepted {
		fmt.Fprintln(ew, "  (inconclusive accepted by --allow-inconclusive)")
	}
	writeBaseline(ew, r)
	t := r.Totals
	fmt.Fprintf(ew, "  %s, %s, %s, %s, %s, %s\n",
		plural(t.Sessions, "session"), plural(t.Exchanges, "exchange"), plural(t.Streams, "stream"),
		plural(t.Events, "event"), plural(t.Resumptions, "resumption"), plural(t.Findings, "finding"))
	if c := r.Coverage; c != nil {
		fmt.Fprint(ew, c.lines(summaryWidth))
	}
	fmt.Fprintf(ew, "  %s injected", plural(t.Faults, "fault"))
	for i, f := range r.Faults {
		sep := ", "
		if i == 0 {
			sep = ": "
		}
		fmt.Fprintf(ew, "%s%s %d", sep, f.Kind, f.Count)
	}
	fmt.Fprintln(ew)
	for i, s := range r.Shards {
		line := fmt.Sprintf("  report %d: %s", i+1, s.Verdict)
		if s.Profile != "" {
			line += fmt.Sprintf(", profile %s seed %d", s.Profile, s.Seed)
		}
		if s.Why != "" {
			line += ": " + s.Why
		}
		fmt.Fprintln(ew, line)
	}
}

// statusCounts counts checks by status, the ones that need attention
// first: "1 failed, 1 warned, 12 passed, 7 skipped".
func statusCounts(cs []Check) string {
	n := map[string]int{}
	for _, c := range cs {
		n[c.Status]++
	}
	return strings.Join(nonZero(tally{n[StatusFail], "failed"}, tally{n[StatusWarn], "warned"}, tally{n[StatusPass], "passed"},
		tally{n[StatusSkip], "skipped"}, tally{n[""], "not judged"}), ", ")
}

// writeTable writes one row per check and, under a check that failed or
// warned, its first evidence whole, wrapped to width.
func writeTable(ew io.Writer, rows []Check, width int) {
	if width <= 0 {
		width = summaryWidth
	}
	idw, countw := len("CHECK"), len("COUNT")
	for _, c := range rows {
		idw = max(idw, len(c.ID))
		countw = max(countw, len(fmt.Sprint(c.Count)))
	}
	row := func(id, status, count string) {
		line := fmt.Sprintf("%-*s  %-*s  %s", idw, id, len("STATUS"), status, count)
		io.WriteString(ew, strings.TrimRight(line, " ")+"\n")
	}
	row("CHECK", "STATUS", "COUNT")
	for _, c := range rows {
		row(c.ID, statusLabel(c), fmt.Sprint(c.Count))
		if len(c.Evidence) == 0 || (c.Status != StatusFail && c.Status != StatusWarn) {
			continue
		}
		for _, l := range wrap(shortEvidence(c.Evidence[0]), max(width-len(evidenceIndent), minEvidenceWidth)) {
			io.WriteString(ew, evidenceIndent+l+"\n")
		}
	}
}

// wrap breaks s between words into lines of at most width runes; a word
// longer than width has a line of its own, whole.
func wrap(s string, width int) []string {
	var lines []string
	line, n := "", 0
	for w := range strings.FieldsSeq(s) {
		wn := utf8.RuneCountInString(w)
		if n > 0 && n+1+wn > width {
			lines = append(lines, line)
			line, n = "", 0
		}
		if n > 0 {
			line += " "
			n++
		}
		line += w
		n += wn
	}
	if n > 0 {
		lines = append(lines, line)
	}
	return lines
}

// statusLabel shouts the statuses that need attention.
func statusLabel(c Check) string {
	switch c.Status {
	case StatusFail:
		return "FAIL"
	case StatusWarn:
		return "WARN"
	case "":
		return "-"
	}
	return c.Status
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// errWriter keeps the first write error, so a writer of many lines checks
// once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
