package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// demoView is an observe.Observer that narrates a run as it goes: one line
// per fault firing, per tool call, per reconnection (with its
// Last-Event-ID and the stream it resumes), per response delivered on a
// resumed stream, and per end of the streams that matter. It is safe for
// concurrent use; it keeps a little state per exchange and per event id,
// without bound, which suits a demo and nothing longer.
type demoView struct {
	mu       sync.Mutex
	w        io.Writer
	streams  map[uint64]*viewStream
	ids      map[string]uint64 // delivered event id -> exchange
	sessions map[string]int    // Mcp-Session-Id -> its number
}

// viewStream is what the view knows of one exchange.
type viewStream struct {
	label       string // "POST tools/call", "GET resume", ...
	session     int
	watched     bool // its end is worth a line
	resumes     uint64
	events      int // delivered
	lastID      string
	hasLastID   bool
	retry       int64 // ms, the last retry the client got; -1 none
	gotResponse bool
	fired       bool
	endedAt     time.Duration
	ended       bool
}

func newDemoView(w io.Writer) *demoView {
	return &demoView{w: w, streams: map[uint64]*viewStream{}, ids: map[string]uint64{}, sessions: map[string]int{}}
}

// sessionSeq is the number fray gave the session with id, 0 if unseen.
func (v *demoView) sessionSeq(id string) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.sessions[id]
}

// Observe narrates o.
func (v *demoView) Observe(o *observe.Observation) {
	v.mu.Lock()
	defer v.mu.Unlock()
	s := v.streams[o.Exchange]
	if s == nil {
		s = &viewStream{retry: -1}
		v.streams[o.Exchange] = s
	}
	if o.SessionSeq > 0 {
		s.session = o.SessionSeq
		if o.Session != "" {
			v.sessions[o.Session] = o.SessionSeq
		}
	}
	switch o.Kind {
	case observe.KindRequest:
		v.request(o, s)
	case observe.KindResponse:
		if len(o.Fired) > 0 {
			v.line(o, s, "%s as the stream started", firings(o.Fired))
		}
	case observe.KindEvent:
		v.event(o, s)
	case observe.KindEnd:
		v.end(o, s)
	}
}

func (v *demoView) request(o *observe.Observation, s *viewStream) {
	req := o.Request
	s.label = req.Method
	switch {
	case req.HasLastEventID:
		s.label, s.watched = "GET resume", true
	case req.Method == "GET":
		s.label = "GET standalone"
	}
	for _, m := range req.Messages {
		if m.Method != "" {
			s.label += " " + m.Method
			if m.Method == "tools/call" {
				s.watched = true
			}
			break
		}
	}
	if req.HasLastEventID {
		v.line(o, s, "client reconnects with Last-Event-ID %q%s", shortID(req.LastEventID), v.resumeContext(o, s, req.LastEventID))
	} else if s.watched {
		v.line(o, s, "client calls the tool")
	}
	if len(o.Fired) > 0 {
		v.line(o, s, "%s on the request", firings(o.Fired))
	}
}

// resumeContext says which stream a Last-Event-ID resumes and how long
// the client waited since it ended.
func (v *demoView) resumeContext(o *observe.Observation, s *viewStream, id string) string {
	from, ok := v.ids[id]
	if !ok {
		return " (an id fray never delivered)"
	}
	s.resumes = from
	prev := v.streams[from]
	out := fmt.Sprintf(", resuming exchange %d", from)
	if prev != nil && prev.ended {
		out += fmt.Sprintf(" %s after its stream ended", (o.At - prev.endedAt).Round(time.Millisecond))
		if prev.retry >= 0 {
			out += fmt.Sprintf(" (retry was %dms)", prev.retry)
		} else {
			out += " (no retry given: the client's own backoff)"
		}
	}
	return out
}

func (v *demoView) event(o *observe.Observation, s *viewStream) {
	ev := o.Event
	if ev.Fate == observe.Delivered {
		s.events++
		if ev.DeliveredHasID {
			s.lastID, s.hasLastID = string(ev.DeliveredID), true
			v.ids[s.lastID] = o.Exchange
		}
		if ev.DeliveredHasRetry {
			s.retry = ev.DeliveredRetry
		}
		if k := ev.RPCKind; (k == mcp.RPCResponse || k == mcp.RPCError) && !s.gotResponse {
			s.gotResponse = true
			if s.resumes != 0 {
				v.line(o, s, "the %s reaches the client on the resumed stream (event %d of this stream)", k, s.events)
			}
		}
	}
	if len(o.Fired) > 0 {
		s.fired = true
		v.line(o, s, "%s on %s: %s", firings(o.Fired), eventName(ev), eventEffect(ev))
	}
}

func (v *demoView) end(o *observe.Observation, s *viewStream) {
	s.ended, s.endedAt = true, o.At
	if len(o.Fired) > 0 {
		s.fired = true
		v.line(o, s, "%s at the end of the stream", firings(o.Fired))
	}
	if !s.watched && !s.fired {
		return
	}
	last := "no event id"
	if s.hasLastID {
		last = fmt.Sprintf("last id %q", shortID(s.lastID))
	}
	var what string
	switch c := o.End.Cause; {
	case c == observe.FaultClosed:
		what = "fray closed the stream"
	case c == observe.FaultReset:
		what = "fray reset the connection"
	case c == observe.Complete && !s.gotResponse && s.watched:
		what = "the server closed the stream before the response (SEP-1699)"
	case c == observe.Complete && s.gotResponse:
		what = "the stream ended with the response"
	case c == observe.Complete:
		what = "the server ended the stream"
	default:
		what = "the stream ended: " + c.String()
	}
	v.line(o, s, "%s after %s, %s", what, pluralize(s.events, "event"), last)
}

// line narrates one thing that happened, its message wrapped under
// itself so that no line passes demoWidth.
func (v *demoView) line(o *observe.Observation, s *viewStream, format string, args ...any) {
	label := s.label
	if label == "" {
		label = o.Stream.String()
	}
	head := fmt.Sprintf("  %7.3fs  session %d  exchange %-3d %-16s ", o.At.Seconds(), s.session, o.Exchange, label)
	writeWrapped(v.w, head, strings.Repeat(" ", len(head)), fmt.Sprintf(format, args...))
}

// demoWidth bounds the demo's lines, in runes.
const demoWidth = 100

// writeWrapped writes text after head, wrapped at spaces so that no line
// passes demoWidth where it can be helped; lines after the first begin
// with indent. A word longer than a line is kept whole.
func writeWrapped(w io.Writer, head, indent, text string) {
	line, n := head, utf8.RuneCountInString(head)
	empty := true // nothing of text on line yet
	for _, word := range strings.Fields(text) {
		wn := utf8.RuneCountInString(word)
		if !empty && n+1+wn > demoWidth {
			fmt.Fprintln(w, line)
			line, n, empty = indent, utf8.RuneCountInString(indent), true
		}
		if !empty {
			line += " "
			n++
		}
		line += word
		n += wn
		empty = false
	}
	fmt.Fprintln(w, strings.TrimRight(line, " "))
}

// shortID shortens an event id for the narration, which has no room for
// the Go SDK's 26-character stream prefix: "GQ72…_0". The report and the
// trace keep ids whole.
func shortID(id string) string {
	if utf8.RuneCountInString(id) <= 12 {
		return id
	}
	r := []rune(id)
	if i := strings.LastIndexByte(id, '_'); i >= 0 && utf8.RuneCountInString(id[i:]) <= 6 {
		return string(r[:4]) + "…" + id[i:]
	}
	return string(r[:8]) + "…"
}

// firings names the faults that fired: "fault 1 (close)".
func firings(fs []faults.Firing) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = fmt.Sprintf("fault %d (%s)", f.Index, f.Kind)
	}
	return strings.Join(parts, ", ")
}

// eventName is "the priming event (id "x")" or "event 3 (id "y")".
func eventName(ev *observe.Event) string {
	name := fmt.Sprintf("event %d", ev.Index)
	if ev.Priming {
		name = "the priming event"
	}
	if ev.HasID {
		name += fmt.Sprintf(" (id %q)", shortID(string(ev.ID)))
	}
	return name
}

// eventEffect says what happened to an event a fault acted on.
func eventEffect(ev *observe.Event) string {
	var out []string
	switch ev.Fate {
	case observe.Dropped:
		out = append(out, "dropped")
	case observe.Lost:
		out = append(out, "lost in flight")
	case observe.Cut:
		out = append(out, "the stream was cut before it")
	case observe.Stalled:
		out = append(out, "the stream stalls for good before it")
	case observe.Undelivered:
		out = append(out, "never delivered")
	}
	if ev.Fate == observe.Delivered {
		switch {
		case ev.DeliveredHasRetry && (!ev.HasRetry || ev.DeliveredRetry != ev.Retry):
			out = append(out, fmt.Sprintf("delivered with retry %dms", ev.DeliveredRetry))
		case ev.HasRetry && !ev.DeliveredHasRetry:
			out = append(out, "delivered without its retry")
		}
		if ev.HasID && !ev.DeliveredHasID {
			out = append(out, "delivered without its id")
		} else if ev.DeliveredHasID && string(ev.DeliveredID) != string(ev.ID) {
			out = append(out, fmt.Sprintf("delivered with id %q", shortID(string(ev.DeliveredID))))
		}
		if ev.Copies > 1 {
			out = append(out, fmt.Sprintf("delivered %d times", ev.Copies))
		}
		if ev.Corrupted {
			out = append(out, "its JSON broken")
		}
		if len(out) == 0 {
			out = append(out, "delivered")
		}
	}
	return strings.Join(out, ", ")
}

func pluralize(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
