// Package timeline draws a trace as one self-contained HTML page that
// explains the run: a lane per exchange (grouped by session), each SSE
// event a mark coloured by its fate, the events that carry a JSON-RPC
// response marked apart, every request whose response never reached the
// client flagged, fault firings labelled with what they did, the retry
// window after each stream that ended before its response (so that a
// reconnection inside it stands out), every reconnection's Last-Event-ID
// drawn back to the event it names, run-level markers across all lanes,
// the client command and its exit code, and every check of the verdict
// with its status and evidence.
//
//	trace --Build--> Model (pure: lanes, columns of marks, links, windows, checks)
//	Model --Write--> HTML (inline CSS and script; the script draws on a canvas)
//
// The page fetches nothing. Marks are drawn on a canvas, and only the
// labels and markers in view are DOM nodes (each with its tooltip), so a
// trace of hundreds of thousands of events stays responsive.
package timeline

import (
	"strconv"
	"time"

	"github.com/frayproxy/fray/proxy/mcp"
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
	// Command and ExitCode are the client command fray run wrapped and
	// how it exited (the trace's end line). Nil Command takes the
	// report's, if it has one.
	Command  []string
	ExitCode int
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
	flagResponse               // its data is a JSON-RPC response
	flagError                  // its data is a JSON-RPC error response
)

// Model is the page's data, serialised into it as JSON. Marks are stored
// as columns (one array per field) so that a large trace parses fast.
type Model struct {
	Title   string `json:"title"`
	Note    string `json:"note,omitempty"`
	Profile string `json:"profile"`
	Seed    uint64 `json:"seed"`
	Started string `json:"started"`
	EndUS   int64  `json:"end_us"`
	Verdict string `json:"verdict,omitempty"`
	// Exercised is the report's coverage line ("exercised: ..."), ""
	// without a report.
	Exercised string `json:"exercised,omitempty"`
	// Command is the client command fray run wrapped, nil when none;
	// ExitCode how it exited.
	Command  []string  `json:"command,omitempty"`
	ExitCode int       `json:"exit_code"`
	Sessions []Session `json:"sessions"`
	Lanes    []Lane    `json:"lanes"`
	Events   Events    `json:"events"`
	Faults   Faults    `json:"faults"`
	Links    []Link    `json:"links"`
	// Unanswered are the requests whose response never reached the
	// client, in lane order.
	Unanswered []Unanswered `json:"unanswered"`
	// Windows are the retry windows after streams that ended before
	// their response, in lane order.
	Windows []Window `json:"windows"`
	// Run are the run-level markers, drawn as vertical lines across all
	// lanes, in time order.
	Run []RunMark `json:"run"`
	// Checks are every check of the report, failed first, then warned,
	// passed and skipped, each in catalog order.
	Checks   []Check   `json:"checks"`
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
	// Answers counts the JSON-RPC responses of a JSON body delivered
	// whole; responses in events are marked on the events.
	Answers int `json:"answers,omitempty"`
	// Retry is the last retry (ms) delivered to the client on the lane, 0
	// when none.
	Retry int64 `json:"retry,omitempty"`
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
	// Effect says what the fault did, e.g. "held the event 2s": an index
	// into Model.Strings.
	Effect []int `json:"effect"`
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

// Unanswered is a JSON-RPC request whose response never reached the
// client: no event that carries it was delivered in the request's
// session, and no JSON body brought it.
type Unanswered struct {
	Lane   int    `json:"lane"`
	AtUS   int64  `json:"t"`
	ID     string `json:"id"`
	Method string `json:"method"`
	// Finding is the verifier's evidence that names the request (check
	// e2e.every-request-answered), "" when none does: the verifier
	// excused it, or kept only the first findings.
	Finding string `json:"finding,omitempty"`
}

// Window is the time after a stream ended before its response (a fault
// cut it, the server closed it) during which the client must not
// reconnect: from the end to the end plus the last retry delivered on the
// stream, or else the one the client held when it opened the stream.
type Window struct {
	Lane    int   `json:"lane"`
	FromUS  int64 `json:"from"`
	ToUS    int64 `json:"to"`
	RetryMS int64 `json:"retry"`
	// RetryLane is the lane whose event delivered the retry.
	RetryLane int `json:"retry_lane"`
	// Reconnect is the lane of the reconnection that followed, -1 when
	// none did; ReconnectUS when it began.
	Reconnect   int   `json:"reconnect"`
	ReconnectUS int64 `json:"reconnect_t,omitempty"`
	// Early: the reconnection came inside the window.
	Early bool `json:"early,omitempty"`
}

// RunMark is a moment of the whole run, drawn as a vertical line across
// all lanes: the end of the run today; profile changes when traces
// record them.
type RunMark struct {
	AtUS int64 `json:"t"`
	// Kind names the marker's sort ("end"); the page styles by it.
	Kind string `json:"kind"`
	// Label is drawn by the line, Detail shown on hover.
	Label  string `json:"label"`
	Detail string `json:"detail,omitempty"`
}

// Check is one check of the report and its status.
type Check struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Severity string `json:"severity"`
	Summary  string `json:"summary"`
	Count    int    `json:"count"`
	Applied  int    `json:"applied"`
	// Excused lists why cases were not held against either end, with
	// their counts, e.g. "cancelled by the client (2)".
	Excused []string `json:"excused,omitempty"`
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
	// requests are the JSON-RPC requests of a POST body, responses the
	// ids of the responses delivered on the lane (in events or a JSON
	// body).
	requests  []observe.Message
	responses []string
	stream    bool // the response is an event stream
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
	effect      string
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
	// What the marks alone do not say, once the lanes are laid out and the
	// links resolved: the requests never answered, the retry windows.
	b.unanswered(in.Report)
	b.windows()
	m.Checks, m.Findings = []Check{}, []Finding{}
	if in.Report != nil {
		m.Verdict = in.Report.Verdict
		if c := in.Report.Coverage; c != nil {
			m.Exercised = c.Line()
		}
		m.Checks = checks(in.Report)
		m.Findings = findings(in.Report)
		if c := in.Report.Command; c != nil {
			m.Command, m.ExitCode = c.Args, c.ExitCode
		}
	}
	if in.Command != nil {
		m.Command, m.ExitCode = in.Command, in.ExitCode
	}
	b.runMarks(in.End)
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
	// order maps Model.Lanes to b.lanes once laid out.
	order []int
	// run collects the run-level marks the observations make.
	run []RunMark
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
	if o.Exchange == 0 {
		// An observation of no exchange gets no lane: a profile change
		// marks the whole run.
		if o.Profile != nil {
			b.run = append(b.run, profileMark(o.At, o.Profile))
		}
		return
	}
	li := b.lane(o)
	l := b.lanes[li]
	at := o.At.Microseconds()
	l.EndUS = max(l.EndUS, at)
	ev := -1
	fired := o.Fired
	switch o.Kind {
	case observe.KindRequest:
		l.Label = requestLabel(o.Request)
		for _, msg := range o.Request.Messages {
			if msg.Kind == mcp.RPCRequest && msg.ID != "" {
				l.requests = append(l.requests, msg)
			}
		}
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
		l.stream = o.Response.EventStream
		if o.Response.Origin != observe.FromUpstream {
			// fray answered itself: the firings are the request's, already
			// recorded with it.
			fired = nil
		}
	case observe.KindEvent:
		ev = b.event(li, at, o)
	case observe.KindEnd:
		l.Ended, l.Cause = true, o.End.Cause.String()
		if l.Label == "" {
			l.Label = o.Stream.String()
		}
		if o.End.Cause == observe.Complete {
			for _, msg := range o.End.Messages {
				if msg.Kind == mcp.RPCResponse || msg.Kind == mcp.RPCError {
					l.Answers++
					l.responses = append(l.responses, msg.ID)
				}
			}
		}
	}
	for _, f := range fired {
		r := faultRow{lane: li, at: at, kind: b.m.str(f.Kind), index: f.Index, event: ev}
		switch {
		case o.Event != nil:
			r.effect = eventEffect(f.Kind, o.Event, o.At)
		case o.Response != nil:
			r.effect = streamEffect(f.Kind, o.Response)
		case o.Request != nil:
			r.effect = requestEffect(f.Kind, o.Request)
		default:
			r.effect = "acted on the exchange"
		}
		b.faults = append(b.faults, r)
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
	if k := e.RPCKind; k == mcp.RPCResponse || k == mcp.RPCError {
		r.flags |= flagResponse
		if k == mcp.RPCError {
			r.flags |= flagError
		}
		if e.Fate == observe.Delivered {
			l := b.lanes[li]
			l.responses = append(l.responses, string(e.RPCID))
		}
	}
	if e.Fate == observe.Delivered && e.DeliveredHasRetry {
		b.lanes[li].Retry = e.DeliveredRetry
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
