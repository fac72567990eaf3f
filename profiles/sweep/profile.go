package sweep

import (
	"fmt"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// profileDoc is a generated profile as TOML writes it.
type profileDoc struct {
	Name        string         `toml:"name"`
	Description string         `toml:"description"`
	Seed        uint64         `toml:"seed"`
	Checks      map[string]any `toml:"checks,omitempty"`
}

// cutDoc is the fault of a sweep's cell, its keys in reading order.
type cutDoc struct {
	Kind           string `toml:"kind"`
	Stream         string `toml:"stream"`
	RequestMethod  string `toml:"request_method,omitempty"`
	RequestName    string `toml:"request_name,omitempty"`
	StreamSeq      int    `toml:"stream_seq,omitempty"`
	Times          int    `toml:"times"`
	AfterEvents    *int   `toml:"after_events,omitempty"`
	AfterPriming   bool   `toml:"after_priming,omitempty"`
	BeforeResponse bool   `toml:"before_response,omitempty"`
	Status         int    `toml:"status,omitempty"`
	Body           string `toml:"body,omitempty"`
}

// cellDoc is a cell's profile as TOML writes it.
type cellDoc struct {
	Name        string   `toml:"name"`
	Description string   `toml:"description"`
	Seed        uint64   `toml:"seed"`
	Fault       []cutDoc `toml:"fault"`
}

// Name is the name of the cell's profile: "sweep-" and the point and
// mode, in words a file name can hold.
func (c Cell) Name() string {
	return "sweep-" + slug(c.Point.Stream.Label()+"-"+c.Point.Where()+"-"+c.Mode.String())
}

// slug keeps letters, digits and dashes, one dash for any run of others.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// Profile returns the TOML of the profile that cuts the cell's point in
// its mode: one fault with exact selectors on the first stream of the
// point's request method and name (the first GET stream; a resumption by
// its place in the session), and for ResumeError a second that answers
// the next resumption 503. Nothing in it is left to chance: every draw
// fires.
func (c Cell) Profile() ([]byte, error) {
	p := c.Point
	cut := cutDoc{Kind: c.Mode.String(), Stream: p.Stream.Kind, Times: 1}
	again := cutDoc{Kind: "status", Stream: KindResume, Times: 1, Status: 503, Body: "service unavailable"}
	if p.Stream.Kind == KindResume {
		// A resumption carries no JSON-RPC method: its place names it.
		cut.StreamSeq, again.StreamSeq = p.Stream.Seq, p.Stream.Seq+1
	} else {
		cut.RequestMethod, cut.RequestName = p.Stream.Method, p.Stream.Name
	}
	if c.Mode == ResumeError {
		cut.Kind = Close.String()
	}
	n := p.N
	switch {
	case p.Place == Primed && c.Mode != Lose:
		cut.AfterPriming = true
	case p.Place == BeforeResponse && c.Mode != Lose:
		cut.BeforeResponse = true
	default:
		cut.AfterEvents = &n
	}
	doc := cellDoc{
		Name:        c.Name(),
		Description: fmt.Sprintf("fray sweep: %s, by %s.", c.Point, c.describeMode()),
		Seed:        1,
		Fault:       []cutDoc{cut},
	}
	if c.Mode == ResumeError {
		doc.Fault = append(doc.Fault, again)
	}
	return toml.Marshal(doc)
}

func (c Cell) describeMode() string {
	switch c.Mode {
	case Reset:
		return "a TCP reset in place of the next event"
	case Lose:
		return "losing the next event and closing, as a dying connection would"
	case ResumeError:
		return "a clean close, and 503 to the first resumption"
	}
	return "a clean close"
}
