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
	// KindResume is a GET with Last-Event-ID that resumes a request's
	// answer stream.
	KindResume = "resume"
)

// maxIDs bounds the event ids a Learner or a Recorder remembers to tell
// which stream a resumption resumes, and the streams it tracks.
const maxIDs = 1 << 16

// maxStreams bounds the streams a Learner learns: a client that calls a
// thousand tools gives a thousand rows, of which --max-runs runs a few.
const maxStreams = 256

// Stream is an SSE stream a run without faults showed: the first answer
// stream of one request method and name, or the first standalone GET
// stream, or the first resumption of one request method and name. A sweep
// cuts the same stream of the next runs, so it names it by what the client
// asked, not by time.
type Stream struct {
	// Kind is KindPost, KindGet or KindResume.
	Kind string
	// Method is the JSON-RPC method of the request it answers (or whose
	// answer it resumes), "" for a GET stream; Name the name that request
	// targets (a tool's, for tools/call), "" when none.
	Method string
	Name   string
	// Seq is a resumption's place among its session's resumptions, from
	// 1; 0 for the other kinds.
	Seq int
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
	case s.Kind == KindResume:
		return Stream{Kind: KindPost, Method: s.Method, Name: s.Name}.Label() + " (resumed)"
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
	ids     map[string]Stream // event ids, and the request whose answer carried them
	resumes map[int]int       // resumptions per session
	open    map[uint64]int    // exchanges whose stream is learned: its index
	seen    map[string]bool   // keys whose first stream is taken
	streams []Stream
}

// Observe takes one observation of the run.
func (l *Learner) Observe(o *observe.Observation) {
	if l.pending == nil {
		l.pending, l.open, l.seen = map[uint64]Stream{}, map[uint64]int{}, map[string]bool{}
		l.ids, l.resumes = map[string]Stream{}, map[int]int{}
	}
	switch o.Kind {
	case observe.KindRequest:
		if o.Stream == mcp.StreamResume {
			l.resume(o)
		} else if s, ok := requestStream(o); ok {
			l.pending[o.Exchange] = s
		}
	case observe.KindResponse:
		s, ok := l.pending[o.Exchange]
		r := o.Response
		if !ok || r == nil || !r.EventStream || r.Status/100 != 2 || l.seen[s.key()] || len(l.streams) >= maxStreams {
			return
		}
		l.seen[s.key()] = true
		l.open[o.Exchange] = len(l.streams)
		l.streams = append(l.streams, s)
	case observe.KindEvent:
		if o.Event == nil {
			return
		}
		if i, ok := l.open[o.Exchange]; ok {
			l.streams[i].see(o.Event)
		}
		if s, ok := l.pending[o.Exchange]; ok && o.Event.HasID && len(l.ids) < maxIDs {
			l.ids[string(o.Event.ID)] = Stream{Kind: KindPost, Method: s.Method, Name: s.Name}
		}
	case observe.KindEnd:
		delete(l.pending, o.Exchange)
		delete(l.open, o.Exchange)
	}
}

// resume numbers a resumption and names the request whose answer it
// resumes, by the event id it resumes from.
func (l *Learner) resume(o *observe.Observation) {
	if o.SessionSeq == 0 || o.Request == nil {
		return
	}
	l.resumes[o.SessionSeq]++
	s, ok := l.ids[o.Request.LastEventID]
	if !ok || !o.Request.HasLastEventID || s.Method == "" {
		return
	}
	s.Kind, s.Seq = KindResume, l.resumes[o.SessionSeq]
	l.pending[o.Exchange] = s
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
	if s.Response == 0 && s.Kind != KindGet && ev.RPCKind.Answers() {
		s.Response = n
	}
}
