package report

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Live is what a running fray has counted so far, for the progress line.
type Live struct {
	// Elapsed is the time since the proxy started.
	Elapsed time.Duration
	// Exchanges, Events, Faults and Findings count what the verifier has
	// seen: exchanges begun, SSE events, fault firings, findings.
	Exchanges, Events, Faults, Findings int
}

// String renders l as the progress line shows it.
func (l Live) String() string {
	return fmt.Sprintf("fray %s: %s, %s, %s, %s", l.Elapsed.Truncate(time.Second),
		plural(l.Exchanges, "exchange"), plural(l.Events, "event"), plural(l.Faults, "fault"), plural(l.Findings, "finding"))
}

// Default intervals of a Progress.
const (
	DefaultRedraw = 250 * time.Millisecond
	DefaultEvery  = 10 * time.Second
)

// Progress draws the live progress line. On a terminal it keeps one line
// at the bottom, redrawn in place with \r at most every Redraw; elsewhere
// (a CI log, a file) it writes a plain line every Every. When is decided
// from Live.Elapsed alone, so no clock is read here: a line is due when
// Elapsed has entered a new interval since the last one.
//
// Other output to the same writer goes through Write, so that on a
// terminal the line is erased before it and drawn again after it. Set W
// before use; the zero intervals mean DefaultRedraw and DefaultEvery. A
// Progress is safe for concurrent use.
type Progress struct {
	W        io.Writer
	Terminal bool
	Redraw   time.Duration
	Every    time.Duration

	mu      sync.Mutex
	line    string        // the last line drawn
	drawn   bool          // the line is on the terminal now
	last    time.Duration // Elapsed of the last line drawn
	any     bool          // a line was drawn
	midLine bool          // other output left a line unfinished
	stopped bool
}

// eraseLine returns the cursor to the start of the line and clears it.
const eraseLine = "\r\x1b[K"

// Interval is the time between two lines; calling Update twice as often
// draws one per interval.
func (p *Progress) Interval() time.Duration {
	if p.Terminal {
		return cmpOr(p.Redraw, DefaultRedraw)
	}
	return cmpOr(p.Every, DefaultEvery)
}

// Due reports whether a line for l would be drawn now.
func (p *Progress) Due(l Live) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.due(l)
}

func (p *Progress) due(l Live) bool {
	if p.stopped || (p.Terminal && p.midLine) {
		return false
	}
	if p.Terminal && !p.any {
		return true
	}
	// Drawn when Elapsed enters a new interval, so that a caller's ticks
	// may come early or late without skipping a line.
	iv := p.Interval()
	return l.Elapsed/iv > p.last/iv
}

// Update draws l if it is due, and reports whether it did.
func (p *Progress) Update(l Live) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.due(l) {
		return false, nil
	}
	p.last, p.any, p.line = l.Elapsed, true, l.String()
	var err error
	if p.Terminal {
		_, err = io.WriteString(p.W, eraseLine+p.line)
		p.drawn = true
	} else {
		_, err = io.WriteString(p.W, p.line+"\n")
	}
	return true, err
}

// Write writes b to W. On a terminal the progress line is erased first and
// drawn again after b when b ends a line; while a line of other output is
// unfinished, the progress line waits.
func (p *Progress) Write(b []byte) (int, error) { return p.writeTo(p.W, b) }

// Around returns a writer to w (another stream on the same terminal, e.g.
// stdout) that keeps the progress line whole as Write does.
func (p *Progress) Around(w io.Writer) io.Writer {
	if !p.Terminal {
		return w
	}
	return around{p, w}
}

type around struct {
	p *Progress
	w io.Writer
}

func (a around) Write(b []byte) (int, error) { return a.p.writeTo(a.w, b) }

func (p *Progress) writeTo(w io.Writer, b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(b) == 0 {
		return 0, nil
	}
	if !p.Terminal {
		return w.Write(b)
	}
	if p.drawn {
		if _, err := io.WriteString(p.W, eraseLine); err != nil {
			return 0, err
		}
		p.drawn = false
	}
	n, err := w.Write(b)
	p.midLine = b[len(b)-1] != '\n'
	if err == nil && !p.midLine && p.any && !p.stopped {
		_, err = io.WriteString(p.W, p.line)
		p.drawn = true
	}
	return n, err
}

// Stop erases the line from a terminal and draws no more; Write goes on
// passing output through.
func (p *Progress) Stop() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	if p.Terminal && p.drawn {
		p.drawn = false
		_, err := io.WriteString(p.W, eraseLine)
		return err
	}
	return nil
}

func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
