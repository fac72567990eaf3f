package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/frayproxy/fray/proxy/jsonrpc"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/sse"
)

// Clock gives the time and waits; tests replace it.
type Clock interface {
	Now() time.Time
	// Sleep waits d, or until ctx ends; it reports whether d passed.
	Sleep(ctx context.Context, d time.Duration) bool
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Options configures a Server. The zero value replays nothing (every
// request is unmatched) in ModeRecorded at the recorded speed.
type Options struct {
	// Observations are the recorded run's, in trace order.
	Observations []*observe.Observation
	// Mode says whether fault effects are re-applied.
	Mode Mode
	// Speed scales the recorded timing: 2 plays twice as fast; 0 means
	// 1. NoWait sends everything as soon as it can.
	Speed  float64
	NoWait bool
	// Logger receives a line per request and what it was matched to. Nil
	// discards them.
	Logger *slog.Logger
	// Clock gives the time and waits; nil means the real clock.
	Clock Clock
}

// Server answers live requests from a recorded run. It is an http.Handler,
// safe for concurrent use; it holds open the streams that stayed open in
// the recording until their client leaves or Close is called.
type Server struct {
	opts   Options
	script *script
	log    *slog.Logger
	clock  Clock
	done   chan struct{}
	once   sync.Once

	mu    sync.Mutex
	used  map[uint64]bool
	ids   map[string]map[string]string // session -> recorded JSON-RPC id -> live id
	sent  map[string]map[string]bool   // ModeServer: event ids written, per session
	gone  map[string]chan struct{}     // closed when a session is deleted
	stats Stats
}

// Stats counts what a Server did.
type Stats struct {
	// Matched and Unmatched count live requests; Events the event blocks
	// written.
	Matched, Unmatched, Events int
	// Resumes lists the Last-Event-ID of each live request that carried
	// one, in arrival order.
	Resumes []string
}

// New returns a Server for opts.
func New(opts Options) (*Server, error) {
	if opts.Speed < 0 {
		return nil, fmt.Errorf("replay: speed %v: must not be negative", opts.Speed)
	}
	if opts.Speed == 0 {
		opts.Speed = 1
	}
	if err := checkStatuses(opts.Observations); err != nil {
		return nil, err
	}
	s := &Server{opts: opts, script: newScript(opts.Observations), log: opts.Logger, clock: opts.Clock,
		done: make(chan struct{}), used: map[uint64]bool{}, ids: map[string]map[string]string{}, sent: map[string]map[string]bool{},
		gone: map[string]chan struct{}{}}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.clock == nil {
		s.clock = realClock{}
	}
	return s, nil
}

// Close releases the streams held open; later ones end at once.
func (s *Server) Close() { s.once.Do(func() { close(s.done) }) }

// Stats returns the counts so far.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Resumes = slices.Clone(st.Resumes)
	return st
}

// maxBody bounds a request body read to match it.
const maxBody = 16 << 20

// ServeHTTP answers r from the recording.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	live, err := classify(r)
	if err != nil {
		http.Error(w, "fray replay: "+err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	ex := s.script.match(live, s.used)
	if live.hasLEI {
		s.stats.Resumes = append(s.stats.Resumes, live.lei)
	}
	if ex == nil {
		s.stats.Unmatched++
	} else {
		s.stats.Matched++
		if m := rpcIDs(ex, live); m != nil {
			key := liveSession(ex)
			if s.ids[key] == nil {
				s.ids[key] = map[string]string{}
			}
			maps.Copy(s.ids[key], m)
		}
	}
	s.mu.Unlock()
	if ex == nil {
		s.unmatched(w, r, live)
		return
	}
	s.log.LogAttrs(r.Context(), slog.LevelDebug, "replay", slog.String("method", r.Method), slog.String("stream", live.stream.String()),
		slog.Uint64("recorded_exchange", ex.seq), slog.String("last_event_id", live.lei))
	s.answer(w, r, ex)
}

// liveSession is the session an exchange's answers belong to: the one its
// response names, else the one its request carried.
func liveSession(ex *recExchange) string {
	if ex.resp != nil && ex.resp.Session != "" {
		return ex.resp.Session
	}
	return ex.session
}

// classify reads what matching needs from a live request.
func classify(r *http.Request) (*liveRequest, error) {
	l := &liveRequest{method: r.Method}
	var first mcp.RPCKind
	if r.Body != nil && r.Method == http.MethodPost {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		if err != nil {
			return nil, fmt.Errorf("reading the request body: %w", err)
		}
		if len(body) > maxBody {
			return nil, fmt.Errorf("request body over %d bytes", maxBody)
		}
		jsonrpc.ScanBatch(body, func(m jsonrpc.Message) bool {
			if len(l.messages) == 0 {
				first = m.Kind
			}
			l.messages = append(l.messages, observe.Message{Kind: m.Kind, Method: string(m.Method), ID: string(m.ID)})
			return true
		})
	}
	c := mcp.Classify(r.Method, r.URL, r.Header, first, nil)
	l.stream, l.session, l.hasLEI, l.lei = c.Stream, c.Session, c.HasLastEventID, c.LastEventID
	return l, nil
}

// unmatched answers a request the recording has no answer for: 202 for
// what needs none (notifications, responses), 405 for a standalone GET
// (the answer of a server that offers no such stream), and otherwise a
// 500 that says so.
func (s *Server) unmatched(w http.ResponseWriter, r *http.Request, l *liveRequest) {
	desc := r.Method
	for _, m := range l.messages {
		desc += " " + m.Kind.String() + " " + m.Method + " " + m.ID
	}
	s.log.LogAttrs(r.Context(), slog.LevelWarn, "no recorded exchange matches the request",
		slog.String("request", strings.TrimSpace(desc)), slog.String("session", l.session), slog.String("last_event_id", l.lei))
	onlyNotices := len(l.messages) > 0 && !slices.ContainsFunc(l.messages, func(m observe.Message) bool { return m.Kind == mcp.RPCRequest })
	switch {
	case onlyNotices:
		w.WriteHeader(http.StatusAccepted)
	case l.stream == mcp.StreamGet:
		w.Header().Set("Allow", "POST, DELETE")
		w.WriteHeader(http.StatusMethodNotAllowed)
	default:
		http.Error(w, "fray replay: no recorded exchange matches "+strings.TrimSpace(desc), http.StatusInternalServerError)
	}
}

// hopHeaders are not copied from the recording: the live connection has
// its own.
var hopHeaders = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Transfer-Encoding": true, "Te": true, "Trailer": true,
	"Upgrade": true, "Proxy-Connection": true, "Content-Length": true, "Date": true,
}

// sessionGone returns the channel closed when session is deleted.
func (s *Server) sessionGone(session string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.gone[session]
	if ch == nil {
		ch = make(chan struct{})
		s.gone[session] = ch
	}
	return ch
}

// endSession ends the streams of a session the client deleted, as the
// server did: a stream that outlived the DELETE in the recording must not
// outlive it in the replay, whose timing differs.
func (s *Server) endSession(session string) {
	ch := s.sessionGone(session)
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// answer plays ex to the client. Its waits end early when the client
// leaves, the session is deleted, or the Server is closed.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, ex *recExchange) {
	start := s.clock.Now()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	gone := s.sessionGone(liveSession(ex))
	go func() {
		select {
		case <-gone:
		case <-s.done:
		case <-ctx.Done():
		}
		cancel()
	}()
	if ex.method == http.MethodDelete && ex.resp != nil && ex.resp.Status/100 == 2 {
		defer s.endSession(liveSession(ex))
	}
	if ex.resp == nil {
		// The client left, or was left hanging, before any response.
		s.hold(ctx)
		return
	}
	delay := ex.respAt - ex.reqAt
	if s.opts.Mode == ModeServer && !ex.action.Answered {
		delay -= ex.action.Latency
	}
	if !s.waitUntil(ctx, start, delay) {
		return
	}
	h := w.Header()
	for name, vs := range ex.resp.Header {
		if hopHeaders[name] || len(vs) == 0 {
			continue
		}
		h[name] = slices.Clone(vs)
	}
	if ex.resp.EventStream {
		h.Del("Content-Length")
	}
	w.WriteHeader(ex.resp.Status)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	if !ex.resp.EventStream {
		s.writeBody(w, ex)
		return
	}
	if !s.stream(ctx, w, rc, ex, start) {
		return
	}
	s.finish(ctx, ex, start)
}

// writeBody rebuilds a JSON body from the JSON-RPC ids the recording kept.
func (s *Server) writeBody(w http.ResponseWriter, ex *recExchange) {
	if ex.end == nil || len(ex.end.Messages) == 0 {
		return
	}
	ids := s.idMap(liveSession(ex))
	var out []json.RawMessage
	for _, m := range ex.end.Messages {
		id := m.ID
		if live, ok := ids[id]; ok {
			id = live
		}
		switch m.Kind {
		case mcp.RPCResponse:
			out = append(out, json.RawMessage(`{"jsonrpc":"2.0","id":`+id+`,"result":{}}`))
		case mcp.RPCError:
			out = append(out, json.RawMessage(`{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32603,"message":"fray replay: the trace holds no response bodies"}}`))
		}
	}
	var body []byte
	if len(out) == 1 {
		body = out[0]
	} else {
		body, _ = json.Marshal(out)
	}
	_, _ = w.Write(body)
}

// scaled is recorded time as replay time.
func (s *Server) scaled(d time.Duration) time.Duration {
	if s.opts.NoWait {
		return 0
	}
	return time.Duration(float64(d) / s.opts.Speed)
}

// waitUntil waits until the recorded offset d after start, scaled; it
// reports whether the client is still there.
func (s *Server) waitUntil(ctx context.Context, start time.Time, d time.Duration) bool {
	left := s.scaled(d) - s.clock.Now().Sub(start)
	return s.clock.Sleep(ctx, left)
}

// stream writes the exchange's events on their schedule. It reports
// whether the exchange goes on to its end.
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, rc *http.ResponseController, ex *recExchange, start time.Time) bool {
	session := liveSession(ex)
	for i := range ex.events {
		e := &ex.events[i]
		block, at, copies, ok := s.plan(e, session)
		if e.fate == observe.Stalled && s.opts.Mode == ModeRecorded {
			s.hold(ctx)
			return false
		}
		if !ok {
			continue
		}
		if !s.waitUntil(ctx, start, at-ex.reqAt) {
			return false
		}
		block = s.rewriteID(block, e, session)
		for range copies {
			if _, err := w.Write(block); err != nil {
				return false
			}
		}
		if rc.Flush() != nil {
			return false
		}
		s.mu.Lock()
		s.stats.Events += copies
		s.mu.Unlock()
	}
	return true
}

// plan says what of a recorded event the client gets: the bytes, when,
// how many times; ok is false when it gets nothing.
func (s *Server) plan(e *recEvent, session string) (block []byte, at time.Duration, copies int, ok bool) {
	if s.opts.Mode == ModeServer {
		if e.hasID && len(e.id) > 0 {
			s.mu.Lock()
			seen := s.sent[session]
			if seen == nil {
				seen = map[string]bool{}
				s.sent[session] = seen
			}
			dup := seen[string(e.id)]
			seen[string(e.id)] = true
			s.mu.Unlock()
			if dup {
				// Written already: a replay of what fray had lost.
				return nil, 0, 0, false
			}
		}
		return e.raw, e.at, 1, true
	}
	if e.fate != observe.Delivered {
		return nil, 0, 0, false
	}
	block = e.raw
	if e.delivered != nil {
		block = e.delivered
	}
	at = e.at
	if e.deliveredAt > 0 {
		at = e.deliveredAt
	}
	return block, at, max(e.copies, 1), true
}

func (s *Server) idMap(session string) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ids[session]
}

// rewriteID puts the live client's JSON-RPC id into a response event in
// place of the recorded one.
func (s *Server) rewriteID(block []byte, e *recEvent, session string) []byte {
	if e.msgKind != mcp.RPCResponse && e.msgKind != mcp.RPCError {
		return block
	}
	live, ok := s.idMap(session)[string(e.msgID)]
	if !ok {
		return block
	}
	out, err := replaceID(block, live)
	if err != nil {
		s.log.Warn("replay: could not map a response's JSON-RPC id; sent as recorded", slog.String("error", err.Error()))
		return block
	}
	return out
}

// replaceID sets the top-level "id" of the JSON-RPC message in an event
// block's data to id (raw JSON).
func replaceID(block []byte, id string) ([]byte, error) {
	rd := sse.NewReader(bytes.NewReader(block), len(block)+16)
	e, err := rd.Next()
	if err != nil {
		return nil, err
	}
	var msg map[string]json.RawMessage
	if err := json.Unmarshal(e.Data, &msg); err != nil {
		return nil, fmt.Errorf("event data: %w", err)
	}
	msg["id"] = json.RawMessage(id)
	data, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	e.SetField("data", data)
	return e.AppendTo(nil), nil
}

// finish ends the stream as the recording did.
func (s *Server) finish(ctx context.Context, ex *recExchange, start time.Time) {
	if !ex.ended {
		return
	}
	if ex.withSession {
		s.hold(ctx)
		return
	}
	switch ex.end.Cause {
	case observe.Complete, observe.FaultAnswered:
		s.waitUntil(ctx, start, ex.endAt-ex.reqAt)
	case observe.ClientGone:
		s.hold(ctx)
	case observe.FaultClosed:
		if s.opts.Mode == ModeRecorded {
			s.waitUntil(ctx, start, ex.endAt-ex.reqAt)
		}
	case observe.FaultReset:
		if s.opts.Mode == ModeRecorded {
			s.waitUntil(ctx, start, ex.endAt-ex.reqAt)
			panic(http.ErrAbortHandler)
		}
	case observe.UpstreamFailed:
		s.waitUntil(ctx, start, ex.endAt-ex.reqAt)
		panic(http.ErrAbortHandler)
	}
}

// hold keeps a response open until ctx ends: the client leaves, its
// session is deleted, or Close is called.
func (s *Server) hold(ctx context.Context) {
	<-ctx.Done()
}

// checkStatuses refuses a recorded response whose status net/http cannot
// write (WriteHeader panics outside 100-999) or HTTP does not have
// (outside 100-599). The trace reader refuses these with the line; this
// holds for observations given otherwise.
func checkStatuses(obs []*observe.Observation) error {
	for _, o := range obs {
		if o.Kind != observe.KindResponse || o.Response == nil {
			continue
		}
		if st := o.Response.Status; st < 100 || st > 599 {
			return fmt.Errorf("replay: exchange %d: response status %d is outside 100-599; fix or drop that response", o.Exchange, st)
		}
	}
	return nil
}
