package verify

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/jsonrpc"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
)

const ms = time.Millisecond

// timeline feeds a Verifier hand-built observations, so that a test
// reads as the story of a connection: the clock only moves when told.
type timeline struct {
	t        *testing.T
	v        *Verifier
	at       time.Duration
	next     uint64
	seqs     map[string]int
	protocol map[string]string
	// rev is the revision an initialize negotiates.
	rev string
	// log, when set, keeps every observation fed, for a test to feed again.
	log *[]observe.Observation
}

func newTimeline(t *testing.T, opts Options) *timeline {
	t.Helper()
	return &timeline{t: t, v: New(opts), seqs: map[string]int{}, protocol: map[string]string{}, rev: "2025-11-25"}
}

// fresh is a timeline with default options, nothing observed yet.
func fresh(t *testing.T) *timeline { return newTimeline(t, Options{}) }

// initialized is a timeline with default options in which session s1 is
// initialized.
func initialized(t *testing.T) *timeline { return initializedWith(t, Options{}) }

// initializedWith is a timeline with opts in which session s1 is
// initialized.
func initializedWith(t *testing.T, opts Options) *timeline {
	t.Helper()
	tl := newTimeline(t, opts)
	tl.initialize("s1")
	return tl
}

// wait moves the clock.
func (tl *timeline) wait(d time.Duration) *timeline {
	tl.at += d
	return tl
}

func (tl *timeline) seq(session string) int {
	if session == "" {
		return 0
	}
	if n, ok := tl.seqs[session]; ok {
		return n
	}
	n := len(tl.seqs) + 1
	tl.seqs[session] = n
	return n
}

// xch is one exchange of the timeline.
type xch struct {
	tl       *timeline
	num      uint64
	stream   mcp.StreamType
	session  string
	protocol string
	index    int
}

func (tl *timeline) observe(o *observe.Observation) {
	tl.v.Observe(o)
	if tl.log != nil {
		*tl.log = append(*tl.log, *o)
	}
}

func (x *xch) head(k observe.Kind) *observe.Observation {
	return &observe.Observation{Kind: k, At: x.tl.at, Exchange: x.num, Stream: x.stream,
		Session: x.session, SessionSeq: x.tl.seq(x.session), Protocol: x.protocol}
}

// reqOpt changes a request before it is observed.
type reqOpt func(*observe.Observation)

// fired says which faults acted on the request.
func fired(f ...faults.Firing) reqOpt {
	return func(o *observe.Observation) { o.Fired = f }
}

// fault is fault i of the profile, of a registered kind: its firing
// carries the kind's traits, as the proxy's do.
func fault(i int, kind string) faults.Firing {
	k, ok := faults.LookupKind(kind)
	if !ok {
		panic("no fault kind " + kind)
	}
	return faults.Firing{Index: i, Kind: kind, Traits: k.Traits}
}

// action sets what exchange faults did.
func action(a observe.RequestAction) reqOpt {
	return func(o *observe.Observation) { o.Request.Action = a }
}

func header(k, v string) reqOpt {
	return func(o *observe.Observation) { o.Request.Header.Set(k, v) }
}

// request starts an exchange.
func (tl *timeline) request(method, path string, st mcp.StreamType, session string, body string, opts ...reqOpt) *xch {
	tl.next++
	x := &xch{tl: tl, num: tl.next, stream: st, session: session, protocol: tl.protocol[session]}
	o := x.head(observe.KindRequest)
	q := &observe.Request{Method: method, Path: path, Header: http.Header{}}
	if session != "" {
		q.Header.Set("Mcp-Session-Id", session)
	}
	if body != "" {
		jsonrpc.ScanBatch([]byte(body), func(m jsonrpc.Message) bool {
			om := observe.Message{Kind: m.Kind, Method: m.MethodString(), ID: string(m.ID), ProgressToken: string(m.ProgressToken())}
			if m.Kind == mcp.RPCRequest {
				om.Params = m.ParamsDigest()
				om.TaskID = jsonrpc.Unquote(m.TaskID())
			}
			om.Protocol = jsonrpc.Unquote(m.MetaProtocolVersion())
			if n := m.TargetName(); n != nil {
				om.Name, om.HasName = jsonrpc.Unquote(n), true
			}
			q.Messages = append(q.Messages, om)
			if m.Kind == mcp.RPCNotification && m.MethodIs("notifications/cancelled") {
				q.Cancels = append(q.Cancels, string(jsonrpc.Lookup(m.Params, "requestId")))
			}
			return true
		})
	}
	o.Request = q
	for _, f := range opts {
		f(o)
	}
	if v := q.Header.Get("Last-Event-ID"); v != "" || len(q.Header.Values("Last-Event-ID")) > 0 {
		q.HasLastEventID, q.LastEventID = true, v
		q.Header.Del("Last-Event-ID")
	}
	tl.observe(o)
	return x
}

// call POSTs a JSON-RPC request.
func (tl *timeline) call(session string, id int, method string, opts ...reqOpt) *xch {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{}}`, id, method)
	return tl.request("POST", "/mcp", mcp.StreamPost, session, body, opts...)
}

// callProgress POSTs a JSON-RPC request that asks for progress under
// token.
func (tl *timeline) callProgress(session string, id int, method, token string) *xch {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{"_meta":{"progressToken":%q}}}`, id, method, token)
	return tl.request("POST", "/mcp", mcp.StreamPost, session, body)
}

// progress is a progress notification under token.
func progress(id, token string) ev {
	return ev{id: id, data: fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%q,"progress":1}}`, token)}
}

// failed is an error response to request rpcID.
func failed(id string, rpcID, code int, message string) ev {
	return ev{id: id, data: fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":%d,"message":%q}}`, rpcID, code, message)}
}

// notify POSTs a JSON-RPC notification.
func (tl *timeline) notify(session, body string) *xch {
	return tl.request("POST", "/mcp", mcp.StreamPost, session, body)
}

// get sends a GET, with Last-Event-ID when leid is given.
func (tl *timeline) get(session string, leid ...string) *xch {
	if len(leid) > 0 {
		return tl.getWith(session, &leid[0])
	}
	return tl.getWith(session, nil)
}

// getWith sends a GET with request options (e.g. a Last-Event-ID fault).
func (tl *timeline) getWith(session string, leid *string, opts ...reqOpt) *xch {
	st := mcp.StreamGet
	if leid != nil {
		st = mcp.StreamResume
		opts = append([]reqOpt{header("Last-Event-ID", *leid)}, opts...)
	}
	return tl.request("GET", "/mcp", st, session, "", opts...)
}

// initialize runs a whole initialize exchange that issues session and
// negotiates tl.rev, answered in a JSON body.
func (tl *timeline) initialize(session string) {
	x := tl.call("", 0, "initialize")
	x.session = session
	x.respond(http.StatusOK, false, session)
	tl.protocol[session] = tl.rev
	x.protocol = tl.rev
	x.end(observe.Complete, observe.Message{Kind: mcp.RPCResponse, ID: "0"})
}

// respOpt changes a response before it is observed.
type respOpt func(*observe.Observation)

func origin(or observe.Origin) respOpt {
	return func(o *observe.Observation) { o.Response.Origin = or }
}

func respFired(f ...faults.Firing) respOpt {
	return func(o *observe.Observation) { o.Fired = f }
}

// respond answers the exchange; issue is the Mcp-Session-Id of the answer.
func (x *xch) respond(status int, sse bool, issue string, opts ...respOpt) *xch {
	o := x.head(observe.KindResponse)
	o.Response = &observe.Response{Status: status, Origin: observe.FromUpstream, Header: http.Header{}, EventStream: sse, Session: issue}
	if sse {
		// As a server of 2026-07-28 should (accel changes it).
		o.Response.Header.Set(mcp.HeaderAccelBuffering, "no")
	}
	for _, f := range opts {
		f(o)
	}
	x.tl.observe(o)
	return x
}

// stream answers 200 with an event stream.
func (x *xch) stream200(opts ...respOpt) *xch { return x.respond(http.StatusOK, true, "", opts...) }

// ev describes one event from the upstream and its fate.
type ev struct {
	id, data       string
	noID           bool
	retry          int64 // ms; 0 means none
	typ            string
	fate           observe.Fate
	delivered      *string // the id the client got, when a fault changed it
	deliveredRetry *int64  // the retry the client got, when a fault changed it
	copies         int
	corrupted      bool
	fired          []faults.Firing
}

func prime(id string) ev               { return ev{id: id} }
func primeRetry(id string, r int64) ev { return ev{id: id, retry: r} }
func note(id string) ev {
	return ev{id: id, data: `{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`}
}
func resp(id string, rpcID int) ev {
	return ev{id: id, data: fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`, rpcID)}
}
func noID(e ev) ev { e.noID, e.id = true, ""; return e }

func (e ev) as(f observe.Fate, fs ...faults.Firing) ev {
	e.fate, e.fired = f, fs
	return e
}

// send observes one event on the exchange.
func (x *xch) send(e ev) *xch {
	o := x.head(observe.KindEvent)
	var raw strings.Builder
	if e.typ != "" {
		fmt.Fprintf(&raw, "event: %s\n", e.typ)
	}
	if !e.noID {
		fmt.Fprintf(&raw, "id: %s\n", e.id)
	}
	if e.retry > 0 {
		fmt.Fprintf(&raw, "retry: %d\n", e.retry)
	}
	fmt.Fprintf(&raw, "data: %s\n\n", e.data)
	m := jsonrpc.Scan([]byte(e.data))
	oe := &observe.Event{Event: mcp.Event{Index: x.index, Raw: []byte(raw.String()), Parsed: true, Type: []byte(e.typ), ID: []byte(e.id), HasID: !e.noID, Retry: e.retry, HasRetry: e.retry > 0, Priming: !e.noID && e.id != "" && e.data == "", Dispatched: e.data != "", RPCKind: m.Kind, RPCMethod: m.Method, RPCID: m.ID}, Fate: e.fate, Corrupted: e.corrupted}
	if e.data != "" {
		oe.Data = []byte(e.data)
	}
	x.index++
	if e.fate == observe.Delivered {
		oe.DeliveredAt = x.tl.at
		oe.Copies = max(1, e.copies)
		oe.DeliveredID, oe.DeliveredHasID = oe.ID, oe.HasID
		if e.delivered != nil {
			oe.DeliveredID, oe.DeliveredHasID = []byte(*e.delivered), true
			if *e.delivered == "\x00strip" {
				oe.DeliveredID, oe.DeliveredHasID = nil, false
			}
		}
		oe.DeliveredRetry, oe.DeliveredHasRetry = oe.Retry, oe.HasRetry
		if e.deliveredRetry != nil {
			oe.DeliveredRetry, oe.DeliveredHasRetry = *e.deliveredRetry, *e.deliveredRetry >= 0
		}
	}
	o.Event = oe
	o.Fired = e.fired
	x.tl.observe(o)
	return x
}

// keepAlives observes n keep-alive blocks (no id, no data) on the
// exchange, one a second.
func (x *xch) keepAlives(n int) *xch {
	for range n {
		x.tl.wait(time.Second)
		x.send(ev{noID: true})
	}
	return x
}

// end observes the end of the exchange.
func (x *xch) end(c observe.Cause, msgs ...observe.Message) *xch {
	o := x.head(observe.KindEnd)
	o.End = &observe.End{Cause: c, Messages: msgs}
	x.tl.observe(o)
	return x
}

// jsonAnswer answers a call with its response in a JSON body.
func (x *xch) jsonAnswer(rpcID string) *xch {
	x.respond(http.StatusOK, false, "")
	return x.end(observe.Complete, observe.Message{Kind: mcp.RPCResponse, ID: rpcID})
}

func strp(s string) *string { return &s }
func i64p(n int64) *int64   { return &n }

// report returns the report as of now; final the final one.
func (tl *timeline) report() report.Report { return tl.v.Report(tl.at) }
func (tl *timeline) final() report.Report  { return tl.v.Final(tl.at) }

// check returns one check of a report.
func check(t *testing.T, r report.Report, id string) report.Check {
	t.Helper()
	for _, c := range r.Checks {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no check %s in the report", id)
	return report.Check{}
}

// expect asserts a check's status and finding count.
func expect(t *testing.T, r report.Report, id, status string, count int) report.Check {
	t.Helper()
	c := check(t, r, id)
	if c.Status != status || c.Count != count {
		t.Errorf("%s: status %s with %d findings, want %s with %d\nevidence: %+v\nexcused: %+v", id, c.Status, c.Count, status, count, c.Evidence, c.Excused)
	}
	return c
}

// excused returns how many cases of a check were excused for reason.
func excused(t *testing.T, r report.Report, id, reason string) int {
	t.Helper()
	for _, e := range check(t, r, id).Excused {
		if e.Reason == reason {
			return e.Count
		}
	}
	return 0
}

// checkEvidence fails the test unless c has one piece of evidence, of
// which wrong is false.
func checkEvidence(t *testing.T, c report.Check, wrong func(e report.Evidence) bool) {
	t.Helper()
	if len(c.Evidence) != 1 || wrong(c.Evidence[0]) {
		t.Errorf("evidence %+v", c.Evidence)
	}
}

// expectVerdict fails the test unless r's verdict is verdict, for a reason
// that says why ("": any).
func expectVerdict(t *testing.T, r report.Report, verdict, why string) {
	t.Helper()
	if r.Verdict != verdict || !strings.Contains(r.Why, why) {
		t.Errorf("verdict %s (%s), want %s (%s)", r.Verdict, r.Why, verdict, why)
	}
}

// expectExcused asserts a check excused at least one case for reason and
// found nothing.
func expectExcused(t *testing.T, r report.Report, id, reason string) {
	t.Helper()
	c := check(t, r, id)
	if excused(t, r, id, reason) == 0 || c.Count != 0 {
		t.Errorf("%s: %d findings, excused %+v; want none and an excuse %q\nevidence: %+v", id, c.Count, c.Excused, reason, c.Evidence)
	}
}

// says is wrong (checkEvidence) of evidence whose message lacks text.
func says(text string) func(e report.Evidence) bool {
	return func(e report.Evidence) bool { return !strings.Contains(e.Message, text) }
}

// from is wrong (checkEvidence) of evidence on an exchange other than ex.
func from(ex uint64) func(e report.Evidence) bool {
	return func(e report.Evidence) bool { return e.Exchange != ex }
}

// expectNone asserts that none of the checks ids found anything.
func expectNone(t *testing.T, r report.Report, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if c := check(t, r, id); c.Count != 0 {
			t.Errorf("%s: %d findings, want none: %+v", id, c.Count, c.Evidence)
		}
	}
}

// toolCall runs a tools/call whose answer stream carries a priming
// event, a progress notification and the response, all delivered.
func (tl *timeline) toolCall(session string, id int, ids ...string) *xch {
	x := tl.call(session, id, "tools/call").stream200()
	x.send(prime(ids[0])).send(note(ids[1])).send(resp(ids[2], id))
	return x.end(observe.Complete)
}

// story is a subtest: what is played on a fresh timeline, and what the
// report then says.
type story struct {
	name string
	play func(tl *timeline)
	want want
}

// want asserts what a report says.
type want func(t *testing.T, r report.Report)

// tell runs each story as a subtest on a timeline from start, and checks
// the report judge (report or final) makes after it.
func tell(t *testing.T, start func(*testing.T) *timeline, judge func(*timeline) report.Report, stories []story) {
	t.Helper()
	for _, s := range stories {
		t.Run(s.name, func(t *testing.T) {
			tl := start(t)
			s.play(tl)
			s.want(t, judge(tl))
		})
	}
}

// is wants a check's status and finding count (expect).
func is(id, status string, count int) want {
	return func(t *testing.T, r report.Report) { t.Helper(); expect(t, r, id, status, count) }
}

// isWith is is, and checkEvidence of the check with wrong.
func isWith(id, status string, count int, wrong func(e report.Evidence) bool) want {
	return func(t *testing.T, r report.Report) {
		t.Helper()
		checkEvidence(t, expect(t, r, id, status, count), wrong)
	}
}

// excuses wants a check to excuse a case for reason and find nothing
// (expectExcused).
func excuses(id, reason string) want {
	return func(t *testing.T, r report.Report) { t.Helper(); expectExcused(t, r, id, reason) }
}

// verdict wants the report's verdict, for a reason that says why
// (expectVerdict).
func verdict(v, why string) want {
	return func(t *testing.T, r report.Report) { t.Helper(); expectVerdict(t, r, v, why) }
}

// all wants each of ws, in turn.
func all(ws ...want) want {
	return func(t *testing.T, r report.Report) {
		t.Helper()
		for _, w := range ws {
			w(t, r)
		}
	}
}
