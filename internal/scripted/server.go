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
}

// Server is a Streamable HTTP MCP server with an event store: each tool
// call's events are kept, so that a client that resumes with Last-Event-ID
// gets what it missed. It is an http.Handler, safe for concurrent use.
type Server struct {
	opts     ServerOptions
	mu       sync.Mutex
	sessions map[string]*session
	next     int
}

type session struct {
	id      string
	deleted bool
	streams []*stream
}

// stream is the event log of one SSE stream: its events as produced, and
// a channel closed whenever one is added.
type stream struct {
	n      int
	events []event
	done   bool
	notify chan struct{}
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
		ss := &session{id: fmt.Sprintf("session-%d-%d", s.next, time.Now().UnixNano())}
		s.sessions[ss.id] = ss
		s.mu.Unlock()
		w.Header().Set("Mcp-Session-Id", ss.id)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":"scripted","version":"1"}}}`, msg.ID, Protocol)
		return
	}
	ss := s.session(r)
	if ss == nil {
		http.Error(w, "unknown session", http.StatusNotFound)
		return
	}
	if msg.ID == nil || msg.Method == "" {
		w.WriteHeader(http.StatusAccepted) // a notification or a response
		return
	}
	if msg.Method != "tools/call" {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, msg.ID)
		return
	}
	st := s.newStream(ss)
	go s.produce(st, msg.ID)
	s.follow(w, r, st, 0)
}

// newStream adds a stream to the session and writes its priming event.
func (s *Server) newStream(ss *session) *stream {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &stream{n: len(ss.streams), notify: make(chan struct{})}
	ss.streams = append(ss.streams, st)
	if s.opts.Fault != NoPriming {
		st.events = append(st.events, event{id: st.id(0), retry: max(s.opts.Retry, 0)})
	}
	return st
}

func (st *stream) id(seq int) string { return strconv.Itoa(st.n) + "-" + strconv.Itoa(seq) }

// produce runs a tool call: progress steps, then the result.
func (s *Server) produce(st *stream, id json.RawMessage) {
	for i := 1; i <= s.opts.Steps; i++ {
		time.Sleep(s.opts.Interval) // the tool's work
		s.add(st, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%d,"total":%d}}`, id, i, s.opts.Steps), false)
	}
	s.add(st, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"counted to %d"}]}}`, id, s.opts.Steps), true)
}

func (s *Server) add(st *stream, data string, last bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st.events = append(st.events, event{id: st.id(len(st.events) + boolInt(s.opts.Fault == NoPriming)), data: data})
	st.done = last
	close(st.notify)
	st.notify = make(chan struct{})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// follow writes the stream's events from position pos as they come, until
// the last one is written or the client goes away.
func (s *Server) follow(w http.ResponseWriter, r *http.Request, st *stream, pos int, first ...event) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
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
		s.follow(w, r, s.newStream(ss), 0)
		return
	}
	st, pos, ok := s.lookup(ss, lei[0])
	if !ok {
		http.Error(w, fmt.Sprintf("unknown Last-Event-ID %q", lei[0]), http.StatusBadRequest)
		return
	}
	var first []event
	switch s.opts.Fault {
	case ReplayGap:
		pos++
	case ReplayDuplicates:
		pos--
	case ReplayForeign:
		s.mu.Lock()
		for _, o := range ss.streams {
			if o != st && len(o.events) > 1 {
				first = append(first, o.events[1])
				break
			}
		}
		s.mu.Unlock()
	}
	s.follow(w, r, st, max(pos, 0), first...)
}

// lookup finds the stream an event id belongs to and the position after it.
func (s *Server) lookup(ss *session, id string) (*stream, int, bool) {
	n, _, _ := strings.Cut(id, "-")
	sn, err := strconv.Atoi(n)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil || sn < 0 || sn >= len(ss.streams) {
		return nil, 0, false
	}
	st := ss.streams[sn]
	for i, e := range st.events {
		if e.id == id {
			return st, i + 1, true
		}
	}
	return nil, 0, false
}
