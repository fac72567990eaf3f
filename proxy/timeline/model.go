// Package timeline draws a trace as one self-contained HTML page: a lane
// per stream (grouped by session), each SSE event a mark coloured by its
// fate, fault firings in red with their kind, every reconnection's
// Last-Event-ID drawn back to the event it names, and the verifier's
// findings listed with their evidence and highlighted on the lanes.
//
//	trace --Build--> Model (pure: lanes, columns of marks, links, findings)
//	Model --Write--> HTML (inline CSS and script; the script draws on a canvas)
//
// The page fetches nothing. Marks are drawn on a canvas, and only the lane
// labels in view are DOM nodes, so a trace of hundreds of thousands of
// events stays responsive.
package timeline

import (
	"strconv"
	"time"

	"github.com/frayproxy/fray/mcp"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
	"github.com/frayproxy/fray/proxy/trace"
)

// Input is what a page is drawn from. The zero value draws an empty page.
type Input struct {
	// Title heads the page; "" means the trace's profile.
	Title string
	// Header is the trace's header line.
	Header trace.Header
	// Observations are the trace's, in order.
	Observations []*observe.Observation
	// End is when the run ended (the trace's end line).
	End time.Duration
	// Report is the verifier's verdict over the same observations; nil
	// draws no findings.
	Report *report.Report
	// Note is shown under the title, e.g. what a partial read dropped.
	Note string
}

// Event flags, a bit set per event.
const (
	flagPriming    = 1 << iota // a priming event (id, empty data)
	flagDuplicated             // written more than once
	flagHasID                  // carries an id the client saw
	flagModified               // a fault changed what the client got
	flagFault                  // a fault fired on it
	flagCorrupted              // its JSON was broken on purpose
	flagDispatched             // a client fires an event for it
)

// Model is the page's data, serialised into it as JSON. Marks are stored
// as columns (one array per field) so that a large trace parses fast.
type Model struct {
	Title    string    `json:"title"`
	Note     string    `json:"note,omitempty"`
	Profile  string    `json:"profile"`
	Seed     uint64    `json:"seed"`
	Started  string    `json:"started"`
	EndUS    int64     `json:"end_us"`
	Verdict  string    `json:"verdict,omitempty"`
	Sessions []Session `json:"sessions"`
	Lanes    []Lane    `json:"lanes"`
	Events   Events    `json:"events"`
	Faults   Faults    `json:"faults"`
	Links    []Link    `json:"links"`
	Findings []Finding `json:"findings"`
	// Strings is the table the columns' string indexes point into.
	Strings []string `json:"strings"`

	strIndex map[string]int
}

// Session is a group of lanes.
type Session struct {
	Seq   int    `json:"seq"`
	Label string `json:"label"`
	// Lanes are indexes into Model.Lanes, in start order.
	Lanes []int `json:"lanes"`
}

// Lane is one exchange: its request, its response and, for a stream, its
// events.
type Lane struct {
	Exchange uint64 `json:"ex"`
	Session  int    `json:"session"`
	Stream   string `json:"stream"`
	Label    string `json:"label"`
	StartUS  int64  `json:"start"`
	EndUS    int64  `json:"end"`
	Ended    bool   `json:"ended"`
	Cause    string `json:"cause,omitempty"`
	Status   int    `json:"status,omitempty"`
	Origin   string `json:"origin,omitempty"`
	// LastEventID is the Last-Event-ID the client sent, when it sent one.
	LastEventID *string `json:"lei,omitempty"`
	// Forwarded is what fray forwarded instead, when a fault changed it.
	Forwarded *string `json:"fwd,omitempty"`
	// Events counts the lane's events.
	Events int `json:"n"`
	// First is the index of the lane's first event in Model.Events.
	First int `json:"first"`
}

// Events are the event marks, one entry per event in every column, grouped
// by lane and in order within a lane.
type Events struct {
	Lane  []int   `json:"lane"`
	AtUS  []int64 `json:"t"`
	Fate  []int   `json:"fate"`
	Flags []int   `json:"flags"`
	// ID is the id the client got (or the upstream's when it got none),
	// Method the JSON-RPC method or kind: indexes into Model.Strings,
	// -1 for none.
	ID     []int `json:"id"`
	Method []int `json:"method"`
	Index  []int `json:"index"`
	Copies []int `json:"copies"`
}

// Faults are the fault firings, one entry per firing in every column.
type Faults struct {
	Lane  []int   `json:"lane"`
	AtUS  []int64 `json:"t"`
	Kind  []int   `json:"kind"`
	Index []int   `json:"index"`
	// Event is the index in Model.Events of the event it hit, -1 when it
	// acted on the request or the stream.
	Event []int `json:"event"`
}

// Link is a reconnection: a request that carried Last-Event-ID, drawn
// back to the event whose id it names.
type Link struct {
	Lane int    `json:"lane"`
	AtUS int64  `json:"t"`
	ID   string `json:"id"`
	// Event is the index in Model.Events of the named event, -1 when no
	// event of the session carried that id.
	Event int `json:"event"`
}

// Finding is one piece of evidence of a failed or warned check.
type Finding struct {
	Check    string   `json:"check"`
	Status   string   `json:"status"`
	Message  string   `json:"message"`
	Session  int      `json:"session,omitempty"`
	Exchange uint64   `json:"ex,omitempty"`
	Related  []uint64 `json:"related,omitempty"`
	EventIDs []string `json:"event_ids,omitempty"`
	AtMS     int64    `json:"at_ms"`
	Fault    string   `json:"fault,omitempty"`
	// More counts the check's findings beyond the evidence kept, on the
	// check's last finding only.
	More int `json:"more,omitempty"`
}

// laneState is a lane while it is being built.
type laneState struct {
	Lane
	events []int // indexes into the build's event rows
}

// eventRow is one event before the columns are laid out by lane.
type eventRow struct {
	at                         int64
	fate, flags, id, method    int
	index, copies              int
	clientID, upstreamID       string
	hasClientID, hasUpstreamID bool
}

type faultRow struct {
	lane        int
	at          int64
	kind, index int
	event       int // row index, -1 for none
}

// Build lays out in's observations. It is a pure function of in.
func Build(in Input) *Model {
	m := &Model{
		Title: in.Title, Note: in.Note, Profile: in.Header.Profile, Seed: in.Header.Seed,
		EndUS: in.End.Microseconds(), strIndex: map[string]int{},
	}
	if !in.Header.Started.IsZero() {
		m.Started = in.Header.Started.UTC().Format(time.RFC3339)
	}
	if m.Title == "" {
		m.Title = "fray trace"
		if m.Profile != "" {
			m.Title += " — profile " + m.Profile
		}
	}
	b := builder{m: m, byExchange: map[uint64]int{}}
	for _, o := range in.Observations {
		b.observe(o)
	}
	b.layout()
	if in.Report != nil {
		m.Verdict = in.Report.Verdict
		m.Findings = findings(in.Report)
	}
	return m
}

type builder struct {
	m          *Model
	lanes      []*laneState
	byExchange map[uint64]int
	events     []eventRow
	eventLane  []int
	faults     []faultRow
	links      []linkRow
}

type linkRow struct {
	lane    int
	at      int64
	id      string
	session int
}

// str interns s in the string table.
func (m *Model) str(s string) int {
	if i, ok := m.strIndex[s]; ok {
		return i
	}
	m.strIndex[s] = len(m.Strings)
	m.Strings = append(m.Strings, s)
	return len(m.Strings) - 1
}

func (b *builder) lane(o *observe.Observation) int {
	if i, ok := b.byExchange[o.Exchange]; ok {
		l := b.lanes[i]
		if o.SessionSeq != 0 {
			l.Session = o.SessionSeq
		}
		l.Stream = o.Stream.String()
		return i
	}
	l := &laneState{Lane: Lane{Exchange: o.Exchange, Session: o.SessionSeq, Stream: o.Stream.String(), StartUS: o.At.Microseconds()}}
	l.EndUS = l.StartUS
	b.byExchange[o.Exchange] = len(b.lanes)
	b.lanes = append(b.lanes, l)
	return len(b.lanes) - 1
}

func (b *builder) observe(o *observe.Observation) {
	li := b.lane(o)
	l := b.lanes[li]
	at := o.At.Microseconds()
	l.EndUS = max(l.EndUS, at)
	ev := -1
	switch o.Kind {
	case observe.KindRequest:
		l.Label = requestLabel(o.Request)
		if r := o.Request; r.HasLastEventID {
			id := r.LastEventID
			l.LastEventID = &id
			b.links = append(b.links, linkRow{lane: li, at: at, id: id, session: o.SessionSeq})
		}
		if a := o.Request.Action; a.LastEventIDChanged {
			fwd := a.ForwardedLastEventID
			if !a.HasForwardedLastEventID {
				fwd = "(removed)"
			}
			l.Forwarded = &fwd
		}
	case observe.KindResponse:
		l.Status, l.Origin = o.Response.Status, o.Response.Origin.String()
	case observe.KindEvent:
		ev = b.event(li, at, o)
	case observe.KindEnd:
		l.Ended, l.Cause = true, o.End.Cause.String()
		if l.Label == "" {
			l.Label = o.Stream.String()
		}
	}
	for _, f := range o.Fired {
		b.faults = append(b.faults, faultRow{lane: li, at: at, kind: b.m.str(f.Kind), index: f.Index, event: ev})
	}
}

func (b *builder) event(li int, at int64, o *observe.Observation) int {
	e := o.Event
	r := eventRow{at: at, fate: int(e.Fate), index: e.Index, copies: e.Copies, id: -1, method: -1}
	if e.Priming {
		r.flags |= flagPriming
	}
	if e.Copies > 1 {
		r.flags |= flagDuplicated
	}
	if e.Delivered != nil {
		r.flags |= flagModified
	}
	if len(o.Fired) > 0 {
		r.flags |= flagFault
	}
	if e.Corrupted {
		r.flags |= flagCorrupted
	}
	if e.Dispatched {
		r.flags |= flagDispatched
	}
	r.upstreamID, r.hasUpstreamID = string(e.ID), e.HasID
	if e.Fate == observe.Delivered {
		r.clientID, r.hasClientID = string(e.DeliveredID), e.DeliveredHasID
	}
	switch {
	case r.hasClientID:
		r.flags |= flagHasID
		r.id = b.m.str(r.clientID)
	case r.hasUpstreamID:
		r.id = b.m.str(r.upstreamID)
	}
	switch {
	case len(e.RPCMethod) > 0:
		r.method = b.m.str(string(e.RPCMethod))
	case e.RPCKind != mcp.RPCNone:
		r.method = b.m.str(e.RPCKind.String() + " " + string(e.RPCID))
	}
	b.events = append(b.events, r)
	b.eventLane = append(b.eventLane, li)
	b.lanes[li].events = append(b.lanes[li].events, len(b.events)-1)
	return len(b.events) - 1
}

func requestLabel(r *observe.Request) string {
	s := r.Method
	if len(r.Messages) > 0 {
		m := r.Messages[0]
		switch {
		case m.Method != "":
			s += " " + m.Method
		default:
			s += " " + m.Kind.String()
		}
		if m.ID != "" {
			s += " #" + m.ID
		}
		if len(r.Messages) > 1 {
			s += " +" + strconv.Itoa(len(r.Messages)-1)
		}
	} else if r.HasLastEventID {
		s += " resume"
	} else if r.Path != "" {
		s += " " + r.Path
	}
	return s
}
