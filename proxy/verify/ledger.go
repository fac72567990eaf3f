package verify

import (
	"fmt"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
)

// The ledger's bounds. Together with the deadlines after which sessions
// are settled and dropped, they keep the memory of a run of any length
// flat.
const (
	// idWindow is how many event ids the ledger remembers per session
	// (upstream ids and delivered ids each), and how many events per
	// logical stream it keeps for judging a replay.
	idWindow = 4096
	// answeredWindow is how many answered requests a session remembers,
	// to see a response delivered twice.
	answeredWindow = 4096
	// maxPending bounds the unanswered requests of a session; more are
	// counted as not judged.
	maxPending = 16384
	// maxKept bounds the undelivered messages kept per logical stream
	// while a replay may still bring them.
	maxKept = 1024
	// maxLogicals bounds the logical streams a session keeps open for a
	// resumption; the oldest are settled first.
	maxLogicals = 64
	// maxSessionMeta bounds the session ids remembered (issued, deleted,
	// answered 404) after their ledger is dropped.
	maxSessionMeta = 1 << 16
	// maxSessions bounds the sessions with a ledger; past it the least
	// recently active is settled and dropped.
	maxSessions = 4096
	// sweepEvery is how often, in observation time, Observe settles what
	// is past its deadline.
	sweepEvery = time.Second
)

// The reasons of the excuses that say a bound of the ledger was reached;
// a summary names them (report.BoundReached).
var (
	pendingFull = fmt.Sprintf("%smore unanswered requests in a session than the %d the ledger holds", report.BoundReached, maxPending)
	keptFull    = fmt.Sprintf("%smore undelivered messages on a stream than the %d the ledger holds", report.BoundReached, maxKept)
	// unreadAnswer excuses a request whose answer may be in bytes the
	// client got and fray did not read whole.
	unreadAnswer = report.BoundReached + "an answer the client got but fray did not read whole (a JSON body past the 1 MiB it reads, or an event past --max-block): delivered, not judged"
	owedFull     = fmt.Sprintf("%smore owed re-issues than the %d the ledger holds", report.BoundReached, maxOwed)
)

// sessionMeta is what outlives a session's ledger: enough to judge the
// session id in later requests.
type sessionMeta struct {
	seq       int
	issued    bool // seen in an upstream response's Mcp-Session-Id
	deleted   bool // a DELETE the upstream answered 2xx
	deletedAt time.Duration
	dead      bool // answered 404 (upstream or fault)
	deadAt    time.Duration
	deadEx    uint64
	dropped   bool // its ledger was dropped; history is gone
}

// session is the ledger of one session (or of the traffic with no
// session, key "").
type session struct {
	key      string
	seq      int
	meta     *sessionMeta
	protocol string
	legacy   bool
	lastAt   time.Duration
	open     int  // exchanges not ended
	partial  bool // the session's earlier history was dropped
	// ended says why the session ended ("" while it lives); endedByServer
	// when the server or the transport ended it (a 404, a lost legacy
	// stream), which excuses what it still owed, unlike a client's DELETE.
	ended         string
	endedByServer bool
	// ids maps the upstream's event ids, and the ids the client got, to
	// their logical streams.
	ids      *idBook
	logicals []*logical
	pending  map[string]*request
	tokens   map[string]*request // pending requests by progress token
	answered *window[string, *request]
	openGets int      // server-view standalone GET streams open
	refused  *refusal // the first POST the server refused (refusal.go)
	// getFailed is the last failure of its standalone GET stream, and
	// callFailedAt when one of its other exchanges last failed
	// (getfailure.go).
	getFailed    getFailure
	callFailedAt time.Duration
	// deleteAt is when the client sent DELETE for the session (0: never):
	// what the server ends after it, it ends because the client asked.
	deleteAt time.Duration
	// reusedIDs: the server sent an event id of the session again
	// (server.event-ids-unique found it).
	reusedIDs bool
}

// idRec is one event id the upstream sent.
type idRec struct {
	lg       *logical
	pos      int64
	hash     uint64
	exchange uint64
}

// deliveredRec is one event id the client got, and the logical streams
// it got it on: the first, and (when a server replayed it into another
// stream) up to maxAlsoOn more, so that a resumption is matched to the
// stream whose last id it names.
type deliveredRec struct {
	lg        *logical
	also      []*logical
	rewritten bool // a rewrite-id fault made it
}

// maxAlsoOn bounds the other streams an id is remembered on.
const maxAlsoOn = 4

// lgState is where a logical stream stands, as the client sees it.
type lgState uint8

const (
	lgOpen    lgState = iota // a stream of it is open
	lgPending                // ended before its response; a reconnection is owed or possible
	lgDone                   // nothing more is owed
)

// logical is a logical stream: a POST's answer stream and its chain of
// resumptions, the standalone GET stream and its resumptions, or a legacy
// stream. Server-side fields follow what the upstream sent; client-side
// fields what the client got.
type logical struct {
	origin   uint64
	kind     mcp.StreamType
	sess     *session
	protocol string

	// Server side.
	nextPos  int64
	events   []evRec // ring of the last idWindow events with an id (eventids.go)
	evIDs    []byte  // their ids (eventids.go)
	evSpare  []byte
	evBase   uint32 // the place of evIDs[0] among all the ids entered
	evNext   int
	evFolded bool
	evFirst  int64 // the place of the first event entered since the ring was empty
	evLast   int64 // the place of the last event entered
	respSent bool  // the upstream sent a response to one of its requests
	kept     []*kept

	// Client side.
	reqs        int    // requests of its POST not yet answered
	cancelled   int    // of those, the ones the client cancelled
	lastID      []byte // storage reused from event to event
	hasID       bool   // lastID is set and non-empty
	everID      bool
	idUncertain bool
	// unread: blocks of the stream passed on raw, past --max-block; an
	// answer in them reached the client unseen (observe.End.Unread).
	unread     bool
	retry      time.Duration
	hasRetry   bool
	retryFault *report.FaultRef
	idFault    *report.FaultRef

	state        lgState
	streams      int // open streams
	since        time.Duration
	endEx        uint64
	endFault     *report.FaultRef
	lastResume   bool   // its last stream was a resumption
	failed       int    // consecutive failed attempts
	transient    bool   // the last failure was a 5xx, a 429 or a reset
	failWhat     string // what the last failure was, for evidence
	lastFail     uint64 // the exchange of the last failed attempt
	failedByFray int
	fast         int // consecutive attempts begun <100ms after a failure
	loop         loopRun
	attempts     []uint64
	candidate    uint64 // a GET without Last-Event-ID that may be its reconnection
	candidateAt  time.Duration
	clientClosed bool
	closedAt     time.Duration // when the client closed it
	interrupted  bool          // a stream of it ended before its response
	blocked      string        // why fray kept a resumption from working
	ctr          idCounter     // what its upstream ids say of a counter
	resumed      bool
	path         string // legacy: the SSE path
	owed         bool   // the client owes a reconnection
	gaveUp       bool   // it gave up after failed attempts
	cutByFray    bool   // a fault ended one of its streams
	// unrecoverable says how its last cut fell where no conforming pair
	// could recover it, "" when it was not so cut (coverage.go).
	unrecoverable string
	// blamed is the check that already held one end responsible for
	// what this stream failed to deliver; the end-to-end checks excuse
	// the consequence rather than report one cause twice.
	blamed string
}

// evRec is one event of a logical stream, kept to judge a replay: 16
// bytes, for a ring that holds up to idWindow of them for every stream.
// Its place in the stream is not kept: the ring's slots follow the order
// the events came in, and logical.eventPos counts it from the slot.
type evRec struct {
	off, n uint32 // its id's place among all the logical stream's ids (eventids.go), and length
	// atd is when it came (a time.Duration), shifted left one bit, with
	// the low bit set when it was dispatched: times within ±146 years
	// of the run's start are kept whole.
	atd int64
}

// at is when the event came.
func (e *evRec) at() time.Duration { return time.Duration(e.atd >> 1) }

// dispatched reports whether the event was dispatched (it had data).
func (e *evRec) dispatched() bool { return e.atd&1 != 0 }

// kept is a JSON-RPC message the upstream sent that did not reach the
// client whole the first time.
type kept struct {
	id        string // upstream event id, "" when none
	rpcKind   mcp.RPCKind
	rpcID     string
	fate      observe.Fate
	at        time.Duration
	exchange  uint64
	fault     *report.FaultRef
	cli       *logical
	srv       *logical
	laterID   bool // a later id was delivered on the client's stream
	corrupted bool // delivered, with its JSON broken by a corrupt fault
}

// request is one JSON-RPC request a client sent, and what became of it.
type request struct {
	id        string
	method    string
	exchange  uint64
	at        time.Duration
	lg        *logical // its POST's answer stream, nil until one starts
	forwarded int
	delivered int
	cancelled bool
	gone      bool // the client left its exchange before an answer
	settled   bool
	// lost is set when the upstream's response was kept from the client
	// and its logical stream folded: lostReason is why no pair could
	// recover it ("" when one could have).
	lost       bool
	lostReason string
	// token is the progress token the request asked for ("" for none).
	token string
	// cancelJudged: server.disconnect-not-cancel judged its answer.
	cancelJudged bool
}

// exch is one exchange in flight.
type exch struct {
	// armed are the faults armed as the stream started that act only
	// later (faults.Armed), not yet counted; cutAtEvent says a fault
	// ended the stream at one of its events (armed.go).
	armed      []faults.Firing
	cutAtEvent bool

	num      uint64
	at       time.Duration
	method   string
	path     string
	stream   mcp.StreamType
	sess     *session
	protocol string
	// resumable and stateless are mcp.Resumable and mcp.Stateless of
	// protocol, which never changes: asked once, not per event.
	resumable, stateless bool

	clientSession   string
	sessionStripped bool
	clientHasLEID   bool
	acceptsSSE      bool // the client's Accept names text/event-stream
	clientLEID      string
	fwdHasLEID      bool
	fwdLEID         string
	leidByFray      bool
	answeredByFray  bool
	reqFault        *report.FaultRef
	reqs            []*request
	isInit          bool

	responded   bool
	status      int
	origin      observe.Origin
	eventStream bool

	cli, srv  *logical
	attemptOf *logical
	legacyOf  *logical
	resume    *resumeState

	primingDone bool
	events      int
	// cliEvents and cliMsgs count the events and the messages delivered
	// to the client on it; cliKept says an event was kept from it, and
	// keptResponse that the first such was a response (coverage.go).
	cliEvents, cliMsgs    int
	cliKept, keptResponse bool
	upMsgs                int // JSON-RPC messages the upstream sent on it
	// ctrFirst and ctrLast are the first and last counters the upstream's
	// ids carried on it (ctrHas: any did); see countID.
	ctrFirst, ctrLast uint64
	ctrHas            bool
	sawID             bool // the upstream sent an event id on it
	sawRetry          bool
	unparsed          bool
	endFault          *report.FaultRef
	idFault           *report.FaultRef
	blamedDup         string // the check that blamed the server for a replay on it
}

// resumeState follows a stream the server saw as a resumption.
type resumeState struct {
	x        string
	known    bool
	pos      int64
	inReplay bool
	judged   bool
	replayed map[string]bool
	// top is the highest position on its stream of an event replayed so
	// far, -1 before the first.
	top int64
	// since is when the server's answer came; held says a fault of
	// fray's stopped or slowed the stream's events (a stall, a delay, a
	// buffer), so that a silence on it may be fray's; silenceJudged says
	// server.resume-continues has judged it.
	since         time.Duration
	held          bool
	silenceJudged bool
	// cancel is the client's notifications/cancelled of a request the
	// stream carried, nil when none came while it was open (silence.go).
	cancel *cancelSeen
}
