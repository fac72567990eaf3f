package sweep

import (
	"bytes"
	"fmt"
	"maps"

	"github.com/pelletier/go-toml/v2"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// Firing is one firing of a fault in a run, named by its place in the
// traffic rather than by its time, so that a new run of the same pair
// meets the same place again.
type Firing struct {
	// Fault is the fault's index in its profile; Kind its kind.
	Fault int
	Kind  string
	// Stream is the exchange's type (post, get, resume, ...); StreamSeq
	// its place among its session's exchanges of that type, from 1 (0
	// for an exchange without a session, such as initialize).
	Stream    string
	StreamSeq int
	// Method and Name are the request's JSON-RPC method and the name it
	// targets, "" when none.
	Method string
	Name   string
	// Event is the position of the event it fired at, for a fault on
	// events; -1 for a fault on exchanges or streams.
	Event int
}

// String names the firing for a person.
func (f Firing) String() string {
	s := fmt.Sprintf("fault %d (%s) on %s", f.Fault, f.Kind, f.Stream)
	if f.StreamSeq > 0 {
		s += fmt.Sprintf(" #%d", f.StreamSeq)
	}
	if f.Method != "" {
		s += " " + f.Method
	}
	if f.Name != "" {
		s += " " + f.Name
	}
	if f.Event >= 0 {
		s += fmt.Sprintf(" at event %d", f.Event)
	}
	return s
}

// place is what the Recorder keeps of an exchange.
type place struct {
	stream       mcp.StreamType
	seq          int
	method, name string
}

type seqKey struct {
	session int
	stream  mcp.StreamType
}

// Recorder collects the firings of a run from its observations, each
// once, in the order they happened. The zero value is ready to use.
type Recorder struct {
	seqs    map[seqKey]int
	places  map[uint64]place
	seen    map[Firing]bool
	firings []Firing
}

// Observe takes one observation of the run.
func (r *Recorder) Observe(o *observe.Observation) {
	if r.seqs == nil {
		r.seqs, r.places, r.seen = map[seqKey]int{}, map[uint64]place{}, map[Firing]bool{}
	}
	if o.Kind == observe.KindRequest && o.Request != nil {
		r.places[o.Exchange] = r.placeOf(o)
	}
	for _, fi := range o.Fired {
		p := r.places[o.Exchange]
		f := Firing{Fault: fi.Index, Kind: fi.Kind, Stream: p.stream.String(), StreamSeq: p.seq, Method: p.method, Name: p.name, Event: -1}
		if k, ok := faults.LookupKind(fi.Kind); ok && k.On == "event" && o.Kind == observe.KindEvent && o.Event != nil {
			f.Event = o.Event.Index
		}
		if !r.seen[f] {
			r.seen[f] = true
			r.firings = append(r.firings, f)
		}
	}
	if o.Kind == observe.KindEnd {
		delete(r.places, o.Exchange)
	}
}

// placeOf numbers a request among its session's exchanges of its type, as
// the proxy numbers them.
func (r *Recorder) placeOf(o *observe.Observation) place {
	p := place{stream: o.Stream}
	if o.SessionSeq > 0 {
		k := seqKey{o.SessionSeq, o.Stream}
		r.seqs[k]++
		p.seq = r.seqs[k]
	}
	if ms := o.Request.Messages; len(ms) > 0 {
		p.method = ms[0].Method
		if ms[0].HasName {
			p.name = ms[0].Name
		}
	}
	return p
}

// Firings returns the firings recorded so far.
func (r *Recorder) Firings() []Firing { return append([]Firing(nil), r.firings...) }

// dropped are the keys that leave a fault to chance or to the clock: a
// reduced fault fires at its place, every time.
var dropped = []string{"probability", "times", "times_scope", "run_after", "for", "every"}

// Reduced returns the TOML of a profile that fires only the given firings
// of the profile text (its [checks] kept): each firing becomes a fault of
// its own, with its fault's kind and parameters, without chance or
// schedule, and with exact selectors for its place (stream, stream_seq,
// request_method and request_name, and nth for a fault on events).
func Reduced(text []byte, name string, seed uint64, firings []Firing) ([]byte, error) {
	var src struct {
		Checks map[string]any   `toml:"checks"`
		Fault  []map[string]any `toml:"fault"`
	}
	if err := toml.NewDecoder(bytes.NewReader(text)).Decode(&src); err != nil {
		return nil, fmt.Errorf("sweep: reading the profile: %w", err)
	}
	doc := profileDoc{Name: name, Seed: seed, Checks: src.Checks}
	doc.Description = fmt.Sprintf("fray shrink: the %d firing(s) that still fail, each at its place in the traffic.", len(firings))
	for _, f := range firings {
		if f.Fault < 0 || f.Fault >= len(src.Fault) {
			return nil, fmt.Errorf("sweep: firing %s: the profile has %d faults", f, len(src.Fault))
		}
		doc.Fault = append(doc.Fault, reducedFault(src.Fault[f.Fault], f))
	}
	return toml.Marshal(doc)
}

// reducedFault is the fault orig made exact for the place of f.
func reducedFault(orig map[string]any, f Firing) map[string]any {
	out := maps.Clone(orig)
	for _, k := range dropped {
		delete(out, k)
	}
	if k, ok := faults.LookupKind(f.Kind); !ok || !ownsAfter(k) {
		delete(out, "after")
	}
	out["stream"] = f.Stream
	if f.StreamSeq > 0 {
		out["stream_seq"] = f.StreamSeq
	}
	if f.Method != "" {
		out["request_method"] = f.Method
	}
	if f.Name != "" {
		out["request_name"] = f.Name
	}
	if f.Event >= 0 {
		delete(out, "stream_after")
		out["nth"] = f.Event
	}
	return out
}

// ownsAfter reports whether "after" is the kind's own parameter.
func ownsAfter(k faults.KindInfo) bool {
	for _, p := range k.Params {
		if p == "after" {
			return true
		}
	}
	return false
}
