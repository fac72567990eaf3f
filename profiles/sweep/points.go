package sweep

import "fmt"

// Place is where on its stream a point cuts.
type Place uint8

// The places of a point, in stream order.
const (
	// Start: before any event.
	Start Place = iota
	// Primed: right after the priming event.
	Primed
	// AfterEvent: after the Nth event, with more to come.
	AfterEvent
	// BeforeResponse: right before the response to the stream's request.
	BeforeResponse
	// AfterResponse: right after that response.
	AfterResponse
)

// Point is a place on one stream; N is how many of its events reach the
// client before the cut.
type Point struct {
	Stream Stream
	Place  Place
	N      int
}

// Where names the point's place for a person: "before any event", "after
// event 3", ...
func (p Point) Where() string {
	switch p.Place {
	case Start:
		return "before any event"
	case Primed:
		return "after the priming event"
	case BeforeResponse:
		return "before the response"
	case AfterResponse:
		return "after the response"
	}
	return fmt.Sprintf("after event %d", p.N)
}

// String names the point: its stream and its place.
func (p Point) String() string { return p.Stream.Label() + ", " + p.Where() }

// Points lists the points of a stream in stream order: before any event,
// after the priming event, after each further event up to maxEvents,
// right before and right after the response. Two places that would cut
// after the same number of events are one point, named by the first.
func Points(s Stream, maxEvents int) []Point {
	pts := []Point{{Stream: s, Place: Start}}
	next := 1
	if s.Primed {
		pts = append(pts, Point{Stream: s, Place: Primed, N: 1})
		next = 2
	}
	last := s.Events // the last N that leaves an event to come
	if s.Response > 0 {
		last = s.Response - 2
	}
	for n := next; n <= last && n <= maxEvents; n++ {
		pts = append(pts, Point{Stream: s, Place: AfterEvent, N: n})
	}
	if s.Response > 0 {
		if n := s.Response - 1; n >= next {
			pts = append(pts, Point{Stream: s, Place: BeforeResponse, N: n})
		}
		pts = append(pts, Point{Stream: s, Place: AfterResponse, N: s.Response})
	}
	return pts
}

// Mode is how a cell cuts its point.
type Mode uint8

// The modes of a sweep, in the matrix's column order.
const (
	// Close ends the stream cleanly.
	Close Mode = iota
	// Reset aborts the connection with a TCP RST in place of the next event.
	Reset
	// Lose swallows the next event, as a dying connection would, then
	// closes: the server believes it delivered.
	Lose
	// ResumeError closes the stream cleanly and answers the client's first
	// resumption with 503 Service Unavailable.
	ResumeError
)

// Modes lists every mode in column order.
var Modes = []Mode{Close, Reset, Lose, ResumeError}

var modeNames = [...]string{"close", "reset", "lose", "resume-503"}

// String returns the mode's name as the matrix, the reports and the
// generated profiles write it.
func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return "unknown"
}

// Applies reports whether mode m can act at p. Reset and lose act at the
// event after the cut, so they need one to come; an answer to a resumption
// needs a client that can resume, so an event id must have reached it, and
// an unfinished stream to resume.
func Applies(p Point, m Mode) bool {
	switch m {
	case Reset, Lose:
		return p.Place != AfterResponse && p.N < p.Stream.Events
	case ResumeError:
		return p.Place != Start && p.Place != AfterResponse
	}
	return true
}

// Cell is one run of a sweep: a point cut in one mode.
type Cell struct {
	Point Point
	Mode  Mode
}

// String names the cell: its point and its mode.
func (c Cell) String() string { return c.Point.String() + ", " + c.Mode.String() }

// Plan lists the cells of the streams, point by point and mode by mode
// within a point, leaving out the modes that cannot act at a point; when
// there are more than maxRuns, the first maxRuns are kept and left says
// how many were left out.
func Plan(streams []Stream, maxEvents, maxRuns int) (cells []Cell, left int) {
	for _, s := range streams {
		for _, p := range Points(s, maxEvents) {
			for _, m := range Modes {
				if !Applies(p, m) {
					continue
				}
				if len(cells) < maxRuns {
					cells = append(cells, Cell{Point: p, Mode: m})
				} else {
					left++
				}
			}
		}
	}
	return cells, left
}
