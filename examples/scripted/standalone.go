package scripted

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/frayproxy/fray/proxy/sse"
)

// More server misbehaviours, each an event store bug a released server was
// found to have (the probe catalog names them). They continue the
// ServerFault values of server.go.
const (
	// StandaloneReplayEmpty: a resumption of the standalone GET stream
	// replays nothing, and the resumed stream carries only keep-alive
	// comments from then on, as an event store that cannot tell the
	// standalone stream from its event ids does (server.replay-complete).
	StandaloneReplayEmpty ServerFault = 32 + iota
	// ReplayOtherSession: a resumption first replays an event of the
	// stream that answered the same JSON-RPC id in another live session
	// (a finished call's), as an
	// event store shared by the sessions and keyed by stream id alone does
	// (server.replay-isolated).
	ReplayOtherSession
)

// announce sends a notification about a tool call on every open standalone
// stream of the session, when the server announces (ServerOptions.Announce).
func (s *Server) announce(ss *session, what string) {
	if !s.opts.Announce {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range ss.streams {
		if st.reqID != "" || st.done {
			continue
		}
		s.append(ss, st, event{data: fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":%q}}`, what)})
		close(st.notify)
		st.notify = make(chan struct{})
	}
}

// replayBug acts out StandaloneReplayEmpty and ReplayOtherSession on a
// resumption of st: it answers the GET itself and reports true, or adds
// to first what the resumption replays before st's own events.
func (s *Server) replayBug(w http.ResponseWriter, r *http.Request, ss *session, st *stream, first *[]event) bool {
	if s.opts.Fault == StandaloneReplayEmpty {
		if st.reqID != "" {
			return false
		}
		s.keepAlive(w, r, st)
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if st.reqID == "" {
		return false
	}
	for _, o := range s.sessions {
		if o == ss || o.deleted {
			continue
		}
		for _, ost := range o.streams {
			// Only a finished call's: its events went out well before.
			if ost.reqID == st.reqID && ost.done {
				*first = append(*first, ost.events[1])
				return false
			}
		}
	}
	return false
}

// listen keeps the session's standalone GET stream open until ctx ends:
// it opens the stream, tells primed once its first event came (or the
// server offers no stream), and resumes with Last-Event-ID whenever the
// stream ends, after the retry the server gave or the client's backoff.
// It touches nothing of c but its options and the shared id (which locks),
// so that it may run beside the calls.
func (c *client) listen(ctx context.Context, session string, primed chan<- struct{}) {
	var st streamState
	signalled := false
	signal := func() {
		if !signalled {
			signalled = true
			close(primed)
		}
	}
	defer signal()
	failures := 0
	opened := false // a stream was served: a GET from now on reconnects
	for range c.opts.MaxAttempts + 1 {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.opts.URL, nil)
		if err != nil {
			return
		}
		req.Header.Set("Accept", "text/event-stream")
		headers(req, session)
		if st.hasID {
			req.Header.Set("Last-Event-ID", c.standaloneLEID(st.lastID))
		}
		resp, err := c.opts.HTTP.Do(req)
		wait := backoff(c.opts.Backoff, &failures)
		switch {
		case err != nil:
		case resp.StatusCode == http.StatusMethodNotAllowed:
			resp.Body.Close()
			c.standaloneFailed(opened)
			return
		case resp.StatusCode != http.StatusOK:
			resp.Body.Close()
		default:
			opened = true
			if readStandalone(resp, &st, signal, c.noteID) {
				failures = 0
			}
			resp.Body.Close()
			if st.hasRetry {
				wait = st.retry
			}
		}
		if c.opts.Fault == NoBackoff {
			wait = 0
		}
		if ctx.Err() != nil || !sleepCtx(ctx, wait) {
			return
		}
	}
	c.standaloneFailed(opened) // its attempts are spent
}

// readStandalone reads a standalone stream until it ends, keeping the
// last event id and retry in st, calling opened at its first event (an
// id stripped from it or not) and idSeen at each id. It reports whether
// any id came.
func readStandalone(resp *http.Response, st *streamState, opened func(), idSeen func(string)) bool {
	progress := false
	rd := sse.NewReader(resp.Body, 0)
	for {
		e, err := rd.Next()
		if err != nil {
			return progress
		}
		if e.HasRetry {
			st.retry, st.hasRetry = time.Duration(e.Retry)*time.Millisecond, true
		}
		if e.Complete {
			opened()
		}
		if e.Complete && e.HasID {
			st.lastID, st.hasID = string(e.ID), true
			progress = true
			idSeen(st.lastID)
		}
	}
}
