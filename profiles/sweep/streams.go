package sweep

import (
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// The kinds of stream a sweep cuts.
const (
	// KindPost is the SSE answer stream of a client's request.
	KindPost = "post"
	// KindGet is the standalone GET stream.
	KindGet = "get"
)

// Stream is an SSE stream a run without faults showed: the first answer
// stream of one request method and name, or the first standalone GET
// stream. A sweep cuts the same stream of the next runs, so it names it by
// what the client asked, not by time.
type Stream struct {
	// Kind is KindPost or KindGet.
	Kind string
	// Method is the JSON-RPC method of the request it answers, "" for a
	// GET stream; Name the name that request targets (a tool's, for
	// tools/call), "" when none.
	Method string
	Name   string
	// Events is how many blocks the stream carried.
	Events int
	// Primed reports that its first block was a priming event.
	Primed bool
	// Response is how many blocks it carried up to and including the
	// response to its request; 0 when it carried none.
	Response int
}

// Label names the stream for a person: "tools/call slow-count",
// "initialize", "GET stream".
func (s Stream) Label() string {
	switch {
	case s.Kind == KindGet:
		return "GET stream"
	case s.Name != "":
		return s.Method + " " + s.Name
	}
	return s.Method
}

func (s Stream) key() string { return s.Kind + "\x00" + s.Method + "\x00" + s.Name }

// Learner collects the streams of a run from its observations, in the
// order the run opened them. The zero value is ready to use.
type Learner struct {
	pending map[uint64]Stream // requests whose answer is not yet known
	open    map[uint64]int    // exchanges whose stream is learned: its index
	seen    map[string]bool   // keys whose first stream is taken
	streams []Stream
}

// Observe takes one observation of the run.
func (l *Learner) Observe(o *observe.Observation) {
	if l.pending == nil {
		l.pending, l.open, l.seen = map[uint64]Stream{}, map[uint64]int{}, map[string]bool{}
	}
	switch o.Kind {
	case observe.KindRequest:
		if s, ok := requestStream(o); ok {
			l.pending[o.Exchange] = s
		}
	case observe.KindResponse:
		s, ok := l.pending[o.Exchange]
		delete(l.pending, o.Exchange)
		r := o.Response
		if !ok || r == nil || !r.EventStream || r.Status/100 != 2 || l.seen[s.key()] {
			return
		}
		l.seen[s.key()] = true
		l.open[o.Exchange] = len(l.streams)
		l.streams = append(l.streams, s)
	case observe.KindEvent:
		if i, ok := l.open[o.Exchange]; ok && o.Event != nil {
			l.streams[i].see(o.Event)
		}
	case observe.KindEnd:
		delete(l.pending, o.Exchange)
		delete(l.open, o.Exchange)
	}
}

// Streams returns the streams learned so far.
func (l *Learner) Streams() []Stream { return append([]Stream(nil), l.streams...) }

// requestStream is the stream a request may open: a POST of a request (not
// a notification or a response), or the standalone GET.
func requestStream(o *observe.Observation) (Stream, bool) {
	q := o.Request
	if q == nil {
		return Stream{}, false
	}
	switch o.Stream {
	case mcp.StreamGet:
		return Stream{Kind: KindGet}, true
	case mcp.StreamPost:
		if len(q.Messages) == 0 || q.Messages[0].Kind != mcp.RPCRequest {
			return Stream{}, false
		}
		m := q.Messages[0]
		return Stream{Kind: KindPost, Method: m.Method, Name: m.Name}, true
	}
	return Stream{}, false
}

// see counts one block of the stream.
func (s *Stream) see(ev *observe.Event) {
	ev.Classify()
	n := ev.Index + 1
	s.Events = max(s.Events, n)
	if ev.Index == 0 && ev.Priming {
		s.Primed = true
	}
	if s.Response == 0 && s.Kind == KindPost && (ev.RPCKind == mcp.RPCResponse || ev.RPCKind == mcp.RPCError) {
		s.Response = n
	}
}
