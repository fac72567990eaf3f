package report

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Coverage counts the recoveries a run exercised: what fray did that a
// pair had to recover from, and what the pair did next. The zero value
// is a run that exercised nothing.
type Coverage struct {
	// Cuts counts streams a fault cut while an answer was pending on
	// them, by where the cut fell for the client: BeforeEvent before any
	// event reached it, BeforeResponse right before the response (the
	// first event it did not get was the response), AfterPriming after
	// only the priming event (an id, no data), MidStream after a message.
	Cuts           int `json:"cuts"`
	BeforeEvent    int `json:"cuts_before_any_event"`
	BeforeResponse int `json:"cuts_before_response"`
	AfterPriming   int `json:"cuts_after_priming"`
	MidStream      int `json:"cuts_mid_stream"`
	// Unrecoverable counts the cuts no conforming pair could recover: no
	// event id had reached the client, or the revision or the server
	// offers no resumption. Unrecovered lists the first of them.
	Unrecoverable int           `json:"unrecoverable"`
	Unrecovered   []Unrecovered `json:"unrecovered,omitempty"`
	// ServerCloses counts streams the server ended itself while an
	// answer was pending (polling).
	ServerCloses int `json:"server_closes"`
	// StandaloneCuts counts standalone GET streams a fault cut, and
	// StandaloneRefused the standalone GETs answered with an error status.
	StandaloneCuts    int `json:"standalone_cuts"`
	StandaloneRefused int `json:"standalone_refused"`
	// Resumptions counts requests that carried Last-Event-ID. Those of a
	// POST's answer stream are counted by how their stream ended:
	// Complete (the answer came), Silent (no message came), Incomplete
	// (messages, but the stream ended before the answer) and Cut (a fault
	// cut it); Refused counts every resumption answered with an error
	// status, or swallowed by fray.
	Resumptions int `json:"resumptions"`
	Complete    int `json:"resumptions_complete"`
	Silent      int `json:"resumptions_silent"`
	Incomplete  int `json:"resumptions_incomplete"`
	Cut         int `json:"resumptions_cut"`
	Refused     int `json:"resumptions_refused"`
	// Reissues counts cut calls the client re-issued (2026-07-28).
	Reissues int `json:"reissues"`
	// SessionsLost counts sessions answered 404; NewSessions the new
	// sessions that followed.
	SessionsLost int `json:"sessions_lost"`
	NewSessions  int `json:"new_sessions"`
	// RetryWaits counts the waits before a reconnection that
	// client.retry-honoured judged.
	RetryWaits int `json:"retry_waits"`
	// Missing says, one entry a line, what the profile exists to exercise
	// and the run did not; nil when nothing is missing.
	Missing []string `json:"missing,omitempty"`
}

// Unrecovered is a cut no conforming pair could recover, and the
// requests it left without their answer.
type Unrecovered struct {
	// Exchange is the stream cut, AtMS when.
	Exchange uint64 `json:"exchange"`
	Session  int    `json:"session,omitempty"`
	AtMS     int64  `json:"at_ms"`
	// Where is where the cut fell ("before any event", ...), Why why no
	// pair could recover it.
	Where string `json:"where"`
	Why   string `json:"why"`
	// Requests names the requests pending on it ("2 (tools/call)").
	Requests []string  `json:"requests,omitempty"`
	Fault    *FaultRef `json:"fault,omitempty"`
}

// commandFailure says how the client command failed, and, when fray had
// cut a stream where no conforming pair could recover it, that the
// failure follows from that cut.
func (r *Report) commandFailure() string {
	c := r.Coverage
	if c == nil || c.Unrecoverable == 0 || len(c.Unrecovered) == 0 {
		return "the client command failed: " + r.Command.describe()
	}
	return fmt.Sprintf("the client command failed (%s) after %s no conforming pair could recover: %s",
		r.Command.describe(), plural(c.Unrecoverable, "cut"), c.Unrecovered[0].Describe())
}

// MaxUnrecovered bounds Coverage.Unrecovered.
const MaxUnrecovered = 10

// Describe says what the cut was, in one sentence.
func (u Unrecovered) Describe() string {
	var b strings.Builder
	b.WriteString("exchange ")
	fmt.Fprint(&b, u.Exchange)
	if len(u.Requests) > 0 {
		b.WriteString(" (request " + strings.Join(u.Requests, ", ") + ")")
	}
	b.WriteString(" was cut ")
	if u.Fault != nil {
		fmt.Fprintf(&b, "by fault %d (%s) ", u.Fault.Index, u.Fault.Kind)
	}
	b.WriteString(u.Where + ": " + u.Why)
	return b.String()
}

// Line is the coverage in one line a person reads at a glance:
// "exercised: 3 cuts with an answer pending (1 before any event, 2
// mid-stream), 3 resumptions (3 complete), 0 re-issues". The cuts,
// resumptions and re-issues are always named; the rest when they happened.
func (c *Coverage) Line() string { return "exercised: " + strings.Join(c.parts(), ", ") }

// parts are the line's parts, each a count and what it counts.
func (c *Coverage) parts() []string {
	parts := []string{c.cuts(), c.resumptions(), plural(c.Reissues, "re-issue")}
	if c.ServerCloses > 0 {
		parts = append(parts, plural(c.ServerCloses, "close")+" by the server with an answer pending")
	}
	if c.StandaloneCuts > 0 {
		parts = append(parts, plural(c.StandaloneCuts, "standalone stream cut"))
	}
	if c.StandaloneRefused > 0 {
		parts = append(parts, plural(c.StandaloneRefused, "standalone GET")+" refused")
	}
	if c.SessionsLost > 0 {
		parts = append(parts, fmt.Sprintf("%s lost (%d new)", plural(c.SessionsLost, "session"), c.NewSessions))
	}
	if c.RetryWaits > 0 {
		parts = append(parts, plural(c.RetryWaits, "retry wait")+" judged")
	}
	return parts
}

// lines is Line for the summary: indented two spaces, broken between its
// parts into lines of at most width runes, the lines after the first
// indented four. A part longer than a line stays whole.
func (c *Coverage) lines(width int) string {
	var b strings.Builder
	line := "  exercised:"
	for i, p := range c.parts() {
		sep := " "
		if i > 0 {
			sep = ", "
		}
		if i > 0 && utf8.RuneCountInString(line)+len(sep)+utf8.RuneCountInString(p) > width {
			b.WriteString(line + ",\n")
			line, sep = "   ", " "
		}
		line += sep + p
	}
	b.WriteString(line + "\n")
	return b.String()
}

func (c *Coverage) cuts() string {
	s := plural(c.Cuts, "cut") + " with an answer pending"
	return s + inParens(nonZero(tally{c.BeforeEvent, "before any event"}, tally{c.BeforeResponse, "right before the response"},
		tally{c.AfterPriming, "after the priming event"}, tally{c.MidStream, "mid-stream"}, tally{c.Unrecoverable, "unrecoverable"}))
}

func (c *Coverage) resumptions() string {
	return plural(c.Resumptions, "resumption") + inParens(nonZero(tally{c.Complete, "complete"}, tally{c.Incomplete, "incomplete"},
		tally{c.Silent, "silent"}, tally{c.Cut, "cut"}, tally{c.Refused, "refused"}))
}

// tally is a count and what it counts.
type tally struct {
	n    int
	word string
}

// nonZero writes the tallies above 0, in order: "2 complete".
func nonZero(ts ...tally) []string {
	var out []string
	for _, t := range ts {
		if t.n > 0 {
			out = append(out, fmt.Sprintf("%d %s", t.n, t.word))
		}
	}
	return out
}

// inParens is " (a, b)" for parts, "" for none.
func inParens(parts []string) string {
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
