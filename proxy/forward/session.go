package forward

import (
	"sync"

	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// session is what fray knows of one MCP session.
type session struct {
	id       string // sessionKey of the id
	seq      int
	protocol string                   // negotiated revision, "" until known
	streams  [mcp.StreamOther + 1]int // exchanges seen per stream type
}

// sessions tracks sessions by id, forgetting the oldest past a bound so
// that a long soak run holds flat memory. Safe for concurrent use.
type sessions struct {
	mu    sync.Mutex
	byID  map[string]*session
	order []string // ring of ids in creation order, for eviction
	next  int      // next ring slot
	seq   int
	max   int
}

// sessionKey is how the table keys id: by observe.IDKey, so that an id
// of any length (a client may send up to the head limit) takes a bounded
// number of bytes, and 65,536 sessions hold at most a few tens of MiB.
func sessionKey(id string) string { return observe.IDKey(id) }

func newSessions(max int) *sessions {
	return &sessions{byID: make(map[string]*session), max: max}
}

// touch returns the session with id, creating it if needed, and counts one
// exchange of type st in it. It returns the session's sequence number, the
// exchange's ordinal within the session for st, and the protocol revision
// known so far.
func (s *sessions) touch(id string, st mcp.StreamType) (seq, streamSeq int, protocol string) {
	if id == "" {
		return 0, 0, ""
	}
	key := sessionKey(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.getLocked(key)
	ss.streams[st]++
	return ss.seq, ss.streams[st], ss.protocol
}

// getLocked returns the session of key (sessionKey of its id).
func (s *sessions) getLocked(id string) *session {
	if ss, ok := s.byID[id]; ok {
		return ss
	}
	s.seq++
	ss := &session{id: id, seq: s.seq}
	if len(s.order) < s.max {
		s.order = append(s.order, id)
	} else {
		delete(s.byID, s.order[s.next])
		s.order[s.next] = id
		s.next = (s.next + 1) % s.max
	}
	s.byID[id] = ss
	return ss
}

// setProtocol records the negotiated protocol revision of a session.
func (s *sessions) setProtocol(id, protocol string) {
	if id == "" || protocol == "" {
		return
	}
	key := sessionKey(id)
	s.mu.Lock()
	s.getLocked(key).protocol = protocol
	s.mu.Unlock()
}

// forget drops a session that was deleted.
func (s *sessions) forget(id string) {
	key := sessionKey(id)
	s.mu.Lock()
	delete(s.byID, key)
	s.mu.Unlock()
}
