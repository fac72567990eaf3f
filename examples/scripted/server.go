// Package scripted is a pair of small MCP peers written to the letter of
// the Streamable HTTP transport (2025-11-25, SEP-1699) and of the legacy
// HTTP+SSE transport (2024-11-05), each of which can be told to misbehave
// in one exact way. The correct pair is the yardstick fray's checks are
// held to: under every fault profile it must pass every check. Each
// misbehaviour must make exactly its own check fail.
//
// They are test peers: they speak just enough MCP for one tool that
// streams progress (initialize, notifications/initialized, tools/call,
// DELETE), not a general implementation. The official SDKs are exercised
// in examples/interop.
package scripted

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Protocol is the revision the Streamable HTTP server negotiates.
const Protocol = "2025-11-25"

// ServerFault is a way the server can be told to misbehave.
type ServerFault uint8

// The server's misbehaviours; the zero value is a correct server.
const (
	// ServerCorrect follows the specification.
	ServerCorrect ServerFault = iota
	// NoPriming starts streams without a priming event (server.priming-event).
	NoPriming
	// ReplayGap leaves out the first event after Last-Event-ID when it
	// replays (server.replay-complete).
	ReplayGap
	// ReplayDuplicates replays the event Last-Event-ID names too
	// (server.replay-no-duplicates).
	ReplayDuplicates
	// ReplayForeign replays an event of another stream of the session
	// first (server.replay-isolated).
	ReplayForeign
	// SilentResume accepts a resumption, then sends only keep-alive
	// comments: the rest of the call never comes (server.resume-continues).
	// A notifications/cancelled for the call ends the resumed stream, as
	// any cancelled call's streams end.
	SilentResume
)

// IDStyle is how a server writes its event ids; each is unique across the
// streams of a session, as the transport asks.
type IDStyle uint8

// The id styles; the zero value is IDsPerStream.
const (
	// IDsPerStream writes "<stream>-<seq>", as the Go SDK writes
	// "<stream>_<n>".
	IDsPerStream IDStyle = iota
	// IDsCounter counts the events of the whole session: "1", "2", ...
	IDsCounter
	// IDsRandom writes 16 random hex digits (from a source seeded by the
	// session's number).
	IDsRandom
)

// ServerOptions configures a Server. The zero value is a correct server
// that sends retry: 50ms and five progress steps 2 ms apart per call.
type ServerOptions struct {
	// Retry is the retry field of priming events; 0 means 50ms, negative
	// means none.
	Retry time.Duration
	// Steps is the number of progress notifications per tool call; 0
	// means 5.
	Steps int
	// Interval is the time between steps; 0 means 2ms.
	Interval time.Duration
	// Fault is the one misbehaviour, if any.
	Fault ServerFault
	// IDs is how event ids are written.
	IDs IDStyle
	// NoStandaloneGET answers a GET without Last-Event-ID with 405, as a
	// server that offers no standalone stream may.
	NoStandaloneGET bool
	// JSON answers a tools/call with one application/json response once
	// its work is done, instead of an SSE stream.
	JSON bool
	// Poll ends each tools/call stream right after its priming event
	// (SEP-1699 polling), so that the client resumes for the rest while
	// the work goes on.
	Poll bool
	// Announce sends a notifications/message on every open standalone
	// GET stream of the session when a tool call starts and when it ends,
	// as a server whose notifications are unrelated to any request does.
	Announce bool
}

// Server is a Streamable HTTP MCP server with an event store: each tool
// call's events are kept, so that a client that resumes with Last-Event-ID
// gets what it missed. It is an http.Handler, safe for concurrent use.
type Server struct {
	opts     ServerOptions
	mu       sync.Mutex
	sessions map[string]*session
	next     int
	events   int // IDsServer's last id
}

type session struct {
	id      string
	deleted bool
	streams []*stream
	byID    map[string]idPos // where each event id stands
	counter int              // IDsCounter's last id
	rng     *rand.Rand       // IDsRandom's source
}

// idPos places an event id: its stream and its index there.
type idPos struct {
	st  *stream
	pos int
}

// stream is the event log of one SSE stream: its events as produced, and
// a channel closed whenever one is added.
type stream struct {
	n      int
	events []event
	done   bool
	notify chan struct{}
	// reqID is the JSON-RPC id of the request the stream answers; ""
	// for the standalone GET stream.
	reqID string
	// stop is closed when the client cancels the request
	// (notifications/cancelled): the call stops, with no response, and
	// its streams end.
	stop chan struct{}
}

type event struct {
	id    string
	data  string
	retry time.Duration
}

// NewServer returns a Server.
func NewServer(opts ServerOptions) *Server {
	if opts.Retry == 0 {
		opts.Retry = 50 * time.Millisecond
	}
	if opts.Steps == 0 {
		opts.Steps = 5
	}
	if opts.Interval == 0 {
		opts.Interval = 2 * time.Millisecond
	}
	return &Server{opts: opts, sessions: map[string]*session{}}
}

// rpc is a JSON-RPC message as the peers read it.
type rpc struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
}

// ServeHTTP answers the MCP endpoint.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		s.post(w, r)
	case http.MethodGet:
		s.get(w, r)
	case http.MethodDelete:
		if ss := s.session(r); ss != nil {
			s.mu.Lock()
			ss.deleted = true
			s.mu.Unlock()
			w.WriteHeader(http.StatusOK)
			return
		}
		http.Error(w, "unknown session", http.StatusNotFound)
	default:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// session returns the live session the request names, nil if none.
func (s *Server) session(r *http.Request) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.sessions[r.Header.Get("Mcp-Session-Id")]
	if ss == nil || ss.deleted {
		return nil
	}
	return ss
}

func (s *Server) post(w http.ResponseWriter, r *http.Request) {
	var msg rpc
	if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
		http.Error(w, "bad JSON-RPC body: "+err.Error(), http.StatusBadRequest)
		return
	}
	if msg.Method == "initialize" {
		s.mu.Lock()
		s.next++
		ss := &session{id: fmt.Sprintf("session-%d-%d", s.next, time.Now().UnixNano()), byID: map[string]idPos{},
			rng: rand.New(rand.NewPCG(uint64(s.next), 1))}
		s.sessions[ss.id] = ss
		s.mu.Unlock()
		w.Header().Set("Mcp-Session-Id", ss.id)
		writeJSON(w, http.StatusOK, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":"scripted","version":"1"}}}`, msg.ID, Protocol))
		return
	}
	ss := s.session(r)
	if ss == nil {
		http.Error(w, "unknown session", http.StatusNotFound)
		return
	}
	if msg.ID == nil || msg.Method == "" {
		if msg.Method == "notifications/cancelled" {
			s.cancel(ss, msg.Params)
		}
		w.WriteHeader(http.StatusAccepted) // a notification or a response
		return
	}
	if msg.Method != "tools/call" {
		writeJSON(w, http.StatusOK, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, msg.ID))
		return
	}
	if s.opts.JSON {
		for range s.opts.Steps {
			time.Sleep(s.opts.Interval) // the tool's work
		}
		writeJSON(w, http.StatusOK, s.result(msg.ID))
		return
	}
	st := s.newStream(ss, string(msg.ID))
	go s.produce(ss, st, msg.ID)
	if s.opts.Poll && s.opts.Fault != NoPriming {
		// The priming event, with its retry, then the server lets go.
		s.mu.Lock()
		priming := st.events[0]
		s.mu.Unlock()
		startSSE(w)
		writeEvent(w, priming)
		return
	}
	s.follow(w, r, st, 0)
}

func (s *Server) result(id json.RawMessage) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"counted to %d"}]}}`, id, s.opts.Steps)
}

// newStream adds a stream to the session and writes its priming event;
// reqID is the id of the request it answers, "" for a standalone stream.
func (s *Server) newStream(ss *session, reqID string) *stream {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &stream{n: len(ss.streams), notify: make(chan struct{}), reqID: reqID, stop: make(chan struct{})}
	ss.streams = append(ss.streams, st)
	if s.opts.Fault != NoPriming {
		s.append(ss, st, event{retry: max(s.opts.Retry, 0)})
	}
	return st
}

// nextID is the id of the next event of st, in the server's id style; the
// caller holds s.mu. Without priming events a stream's ids start at 1.
func (s *Server) nextID(ss *session, st *stream) string {
	if s.opts.Fault == ReusedIDs {
		return strconv.Itoa(len(st.events) + 1)
	}
	switch s.opts.IDs {
	case IDsCounter:
		ss.counter++
		return strconv.Itoa(ss.counter)
	case IDsRandom:
		return fmt.Sprintf("%016x", ss.rng.Uint64())
	case IDsServer:
		return s.serverID()
	}
	seq := len(st.events)
	if s.opts.Fault == NoPriming {
		seq++
	}
	return strconv.Itoa(st.n) + "-" + strconv.Itoa(seq)
}

// append adds e to st with the next id; the caller holds s.mu.
func (s *Server) append(ss *session, st *stream, e event) {
	e.id = s.nextID(ss, st)
	ss.byID[e.id] = idPos{st, len(st.events)}
	st.events = append(st.events, e)
}

// produce runs a tool call: progress steps, then the result.
func (s *Server) produce(ss *session, st *stream, id json.RawMessage) {
	s.announce(ss, fmt.Sprintf("call %s started", id))
	for i := 1; i <= s.opts.Steps; i++ {
		select {
		case <-time.After(s.opts.Interval): // the tool's work
		case <-st.stop:
			return
		}
		s.add(ss, st, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%d,"total":%d}}`, id, i, s.opts.Steps), false)
	}
	s.add(ss, st, s.result(id), true)
	s.announce(ss, fmt.Sprintf("call %s done", id))
}

func (s *Server) add(ss *session, st *stream, data string, last bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st.done {
		return // cancelled
	}
	s.append(ss, st, event{data: data})
	st.done = last
	close(st.notify)
	st.notify = make(chan struct{})
}

// follow writes the stream's events from position pos as they come, until
// the last one is written or the client goes away.
func (s *Server) follow(w http.ResponseWriter, r *http.Request, st *stream, pos int, first ...event) {
	w.Header().Set("Cache-Control", "no-cache")
	rc := startSSE(w)
	for _, e := range first {
		writeEvent(w, e)
	}
	for {
		s.mu.Lock()
		evs, ch, done := st.events[pos:], st.notify, st.done
		s.mu.Unlock()
		for _, e := range evs {
			writeEvent(w, e)
		}
		pos += len(evs)
		if err := rc.Flush(); err != nil {
			return
		}
		if done {
			return
		}
		select {
		case <-ch:
		case <-r.Context().Done():
			return
		}
	}
}

// startSSE answers 200 with an event stream, whose writes the returned
// controller flushes.
func startSSE(w http.ResponseWriter) *http.ResponseController {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	return http.NewResponseController(w)
}

func writeEvent(w http.ResponseWriter, e event) {
	var b strings.Builder
	b.WriteString("id: " + e.id + "\n")
	if e.retry > 0 {
		b.WriteString("retry: " + strconv.FormatInt(e.retry.Milliseconds(), 10) + "\n")
	}
	b.WriteString("data: " + e.data + "\n\n")
	_, _ = w.Write([]byte(b.String()))
}

// get answers a GET: a resumption when it carries Last-Event-ID, else the
// standalone stream (primed, then quiet until the client leaves).
func (s *Server) get(w http.ResponseWriter, r *http.Request) {
	ss := s.session(r)
	if ss == nil {
		http.Error(w, "unknown session", http.StatusNotFound)
		return
	}
	lei, ok := r.Header["Last-Event-Id"]
	if !ok {
		if s.opts.NoStandaloneGET {
			http.Error(w, "no standalone stream here", http.StatusMethodNotAllowed)
			return
		}
		if s.refuseReopen(w, ss) {
			return
		}
		s.follow(w, r, s.newStream(ss, ""), 0)
		return
	}
	st, pos, ok := s.find(ss, lei[0])
	if !ok {
		http.Error(w, fmt.Sprintf("unknown Last-Event-ID %q", lei[0]), http.StatusBadRequest)
		return
	}
	if s.emptyResume(w, st) {
		return
	}
	var first []event
	switch s.opts.Fault {
	case ReplayGap:
		pos++
	case ReplayDuplicates:
		pos--
	case SilentResume:
		s.keepAlive(w, r, st)
		return
	case ReplayForeign:
		s.mu.Lock()
		for _, o := range ss.streams {
			if o != st && len(o.events) > 1 {
				first = append(first, o.events[1])
				break
			}
		}
		s.mu.Unlock()
	case StandaloneReplayEmpty, ReplayOtherSession:
		if s.replayBug(w, r, ss, st, &first) {
			return
		}
	}
	s.follow(w, r, st, max(pos, 0), first...)
}

// keepAlive answers a resumption of st with a stream that carries only
// comments, every 20 ms, until the client leaves or cancels the call.
func (s *Server) keepAlive(w http.ResponseWriter, r *http.Request, st *stream) {
	rc := startSSE(w)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := io.WriteString(w, ": keepalive\n\n"); err != nil || rc.Flush() != nil {
			return
		}
		select {
		case <-tick.C:
		case <-st.stop:
			return
		case <-r.Context().Done():
			return
		}
	}
}

// cancel stops the call a notifications/cancelled names (params.requestId):
// it sends nothing more, no response included, and its streams end.
func (s *Server) cancel(ss *session, params json.RawMessage) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range ss.streams {
		if st.reqID == string(p.RequestID) && !st.done {
			st.done = true
			close(st.stop)
			close(st.notify)
			st.notify = make(chan struct{})
		}
	}
}
