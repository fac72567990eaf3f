package sweep

import (
	"bytes"
	"fmt"
	"maps"
	"slices"

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
	// Resume is the index in Run.Resumes of the resumption it fired on,
	// -1 when not on a resumption.
	Resume int
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
	session, seq int
	method, name string
	origin       uint64 // the exchange whose stream it carries on
	resume       int    // its index in Run.Resumes, -1 when not a resumption
	cut          int    // the firing that ended or refused it, -1 when none
}

type seqKey struct {
	session int
	stream  mcp.StreamType
}

// Resumption is a GET with Last-Event-ID of a recorded run. It follows
// the end of its stream's previous connection: by a firing (a cut, or an
// error answered to the previous resumption), or by the server.
type Resumption struct {
	// Session is its session's number.
	Session int
	// Cause is the index in Run.Firings of the firing that ended the
	// previous connection, -1 when the server ended it.
	Cause int
}

// Run is what a Recorder kept of a run: its firings and its resumptions,
// in order.
type Run struct {
	Firings []Firing
	Resumes []Resumption
	// Truncated reports that the run had more firings or resumptions
	// than a Recorder keeps; the first are kept.
	Truncated bool
	// Changed reports that the profile in force changed while the run
	// went on: a firing's fault index then names a fault of another
	// profile than the one the run began with.
	Changed bool
}

// maxFirings bounds the firings, and the resumptions, a Recorder keeps:
// a long run's trace may hold millions, and ddmin over more than this
// within any --max-runs would not get far.
const maxFirings = 4096

// Recorder collects the firings of a run from its observations, each
// once, in the order they happened, and the resumptions they caused, up to
// maxFirings of each (Run.Truncated says when more came). The zero value
// is ready to use.
type Recorder struct {
	seqs   map[seqKey]int
	places map[uint64]*place
	ids    map[string]uint64 // event id -> the exchange whose stream carried it first
	causes map[uint64]int    // stream (origin exchange) -> how its last connection ended
	seen   map[Firing]bool
	run    Run
}

// Observe takes one observation of the run.
func (r *Recorder) Observe(o *observe.Observation) {
	if r.seqs == nil {
		r.seqs, r.places, r.seen = map[seqKey]int{}, map[uint64]*place{}, map[Firing]bool{}
		r.ids, r.causes = map[string]uint64{}, map[uint64]int{}
	}
	switch {
	case o.Kind == observe.KindProfile:
		r.run.Changed = true
	case o.Kind == observe.KindRequest && o.Request != nil:
		r.places[o.Exchange] = r.placeOf(o)
	}
	p := r.places[o.Exchange]
	if p == nil {
		return
	}
	for _, fi := range o.Fired {
		r.fired(o, p, fi)
	}
	switch o.Kind {
	case observe.KindEvent:
		if o.Event != nil && o.Event.HasID && len(r.ids) < maxIDs {
			if _, ok := r.ids[string(o.Event.ID)]; !ok {
				r.ids[string(o.Event.ID)] = p.origin
			}
		}
	case observe.KindEnd:
		if _, ok := r.causes[p.origin]; ok || len(r.causes) < maxIDs {
			r.causes[p.origin] = p.cut
		}
		delete(r.places, o.Exchange)
	}
}

// fired records one firing at p.
func (r *Recorder) fired(o *observe.Observation, p *place, fi faults.Firing) {
	f := Firing{Fault: fi.Index, Kind: fi.Kind, Stream: p.stream.String(), StreamSeq: p.seq, Method: p.method, Name: p.name, Event: -1, Resume: p.resume}
	if k, ok := faults.LookupKind(fi.Kind); ok && k.On == "event" && o.Kind == observe.KindEvent && o.Event != nil {
		f.Event = o.Event.Index
	}
	if r.seen[f] {
		return
	}
	if len(r.run.Firings) >= maxFirings {
		r.run.Truncated = true
		return
	}
	r.seen[f] = true
	r.run.Firings = append(r.run.Firings, f)
	if fi.Traits&(faults.EndsStream|faults.AnswersRequests) != 0 && p.cut < 0 {
		p.cut = len(r.run.Firings) - 1
	}
}

// placeOf numbers a request among its session's exchanges of its type, as
// the proxy numbers them, and finds the stream a resumption resumes.
func (r *Recorder) placeOf(o *observe.Observation) *place {
	p := &place{stream: o.Stream, session: o.SessionSeq, origin: o.Exchange, resume: -1, cut: -1}
	if o.SessionSeq > 0 {
		k := seqKey{o.SessionSeq, o.Stream}
		r.seqs[k]++
		p.seq = r.seqs[k]
	}
	q := o.Request
	if len(q.Messages) > 0 {
		p.method = q.Messages[0].Method
		if q.Messages[0].HasName {
			p.name = q.Messages[0].Name
		}
	}
	if len(r.run.Resumes) >= maxFirings {
		r.run.Truncated = true
	} else if o.Stream == mcp.StreamResume && o.SessionSeq > 0 {
		cause := -1
		if origin, ok := r.ids[q.LastEventID]; ok && q.HasLastEventID {
			p.origin = origin
			if c, ok := r.causes[origin]; ok {
				cause = c
			}
		}
		p.resume = len(r.run.Resumes)
		r.run.Resumes = append(r.run.Resumes, Resumption{Session: o.SessionSeq, Cause: cause})
	}
	return p
}

// Run returns what was recorded so far.
func (r *Recorder) Run() Run {
	run := r.run
	run.Firings, run.Resumes = slices.Clone(run.Firings), slices.Clone(run.Resumes)
	return run
}

// dropped are the keys that leave a fault to chance or to the clock: a
// reduced fault fires at its place, every time.
var dropped = []string{"probability", "times", "times_scope", "run_after", "for", "every"}

// Reduced returns the TOML of a profile that fires only the firings of
// the run at the indices of subset, from the profile text (its [checks]
// kept): each firing becomes a fault of its own, with its fault's kind and
// parameters, without chance or schedule, and with exact selectors for its
// place (stream, stream_seq, request_method and request_name, and nth for
// a fault on events). A resumption is numbered among those that still
// happen without the firings left out (each follows its cause); a firing
// on a resumption that no longer happens is left out.
func (run Run) Reduced(text []byte, name string, seed uint64, subset []int) ([]byte, error) {
	var src struct {
		Checks map[string]any   `toml:"checks"`
		Fault  []map[string]any `toml:"fault"`
	}
	if err := toml.NewDecoder(bytes.NewReader(text)).Decode(&src); err != nil {
		return nil, fmt.Errorf("sweep: reading the profile: %w", err)
	}
	placed, err := run.Placed(subset)
	if err != nil {
		return nil, err
	}
	head := profileDoc{Name: name, Seed: seed, Checks: src.Checks}
	head.Description = fmt.Sprintf("fray shrink: the %d firing(s) that still fail, each at its place in the traffic.", len(placed))
	var faults []map[string]any
	for _, f := range placed {
		if f.Fault < 0 || f.Fault >= len(src.Fault) {
			return nil, fmt.Errorf("sweep: firing %s: the profile has %d faults", f, len(src.Fault))
		}
		faults = append(faults, reducedFault(src.Fault[f.Fault], f))
	}
	return writeProfile(head, faults)
}

// Placed returns the firings at the indices of subset at their places
// when only they fire: a firing on a resumption renumbered among the
// resumptions that still happen, one on a resumption that no longer
// happens left out.
func (run Run) Placed(subset []int) ([]Firing, error) {
	seqs := run.resumeSeqs(subset)
	var out []Firing
	for _, i := range subset {
		if i < 0 || i >= len(run.Firings) {
			return nil, fmt.Errorf("sweep: firing %d: the run has %d", i, len(run.Firings))
		}
		f := run.Firings[i]
		if f.Resume >= 0 {
			if f.Resume >= len(seqs) || seqs[f.Resume] == 0 {
				continue
			}
			f.StreamSeq = seqs[f.Resume]
		}
		out = append(out, f)
	}
	return out, nil
}

// writeProfile writes the profile's head, then each fault as a
// [[fault]] table with its kind first and its other keys in order, a
// table among them (a status's headers) inline.
func writeProfile(head profileDoc, faults []map[string]any) ([]byte, error) {
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(head); err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	for _, f := range faults {
		rest := maps.Clone(f)
		delete(rest, "kind")
		b.WriteString("\n[[fault]]\n")
		if err := toml.NewEncoder(&b).Encode(map[string]any{"kind": f["kind"]}); err != nil {
			return nil, fmt.Errorf("sweep: %w", err)
		}
		if err := toml.NewEncoder(&b).SetTablesInline(true).Encode(rest); err != nil {
			return nil, fmt.Errorf("sweep: %w", err)
		}
	}
	return b.Bytes(), nil
}

// resumeSeqs numbers the resumptions that still happen when only the
// firings of subset fire, each among its session's: 0 for one that no
// longer happens. A resumption happens when the server ended the
// connection before it, or when the firing that did is kept and itself
// happens.
func (run Run) resumeSeqs(subset []int) []int {
	kept := map[int]bool{}
	for _, i := range subset {
		kept[i] = true
	}
	seqs := make([]int, len(run.Resumes))
	count := map[int]int{}
	for i, r := range run.Resumes {
		happens := r.Cause < 0
		if c := r.Cause; c >= 0 && c < len(run.Firings) && kept[c] {
			on := run.Firings[c].Resume
			happens = on < 0 || (on < i && seqs[on] > 0)
		}
		if happens {
			count[r.Session]++
			seqs[i] = count[r.Session]
		}
	}
	return seqs
}

// reducedFault is the fault orig made exact for the place of f.
func reducedFault(orig map[string]any, f Firing) map[string]any {
	out := maps.Clone(orig)
	for _, k := range dropped {
		delete(out, k)
	}
	if k, ok := faults.LookupKind(f.Kind); !ok || !slices.Contains(k.Params, "after") {
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
