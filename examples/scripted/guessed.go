package scripted

import "strconv"

// IDsServer counts the events of the whole server, every session's:
// "1", "2", ... Ids are unique across sessions, and easy to guess.
const IDsServer IDStyle = 16

// More server misbehaviours, each one a released server was found to
// have (the probe catalog names them). Their values start at 64, apart
// from the other blocks of ServerFault.
const (
	// ReplayGuessedID looks a resumption's Last-Event-ID up in the whole
	// event store when the session has no such id, as a store keyed by
	// event id alone, with no check of the session, does: a client that
	// guesses another session's id is served that session's stream
	// (server.replay-isolated).
	ReplayGuessedID ServerFault = 64 + iota
)

// serverID is the next id of IDsServer; the caller holds s.mu.
func (s *Server) serverID() string {
	s.events++
	return strconv.Itoa(s.events)
}

// find finds the stream an event id belongs to and the position after it:
// in the session, or, for a server with ReplayGuessedID, in any live
// session.
func (s *Server) find(ss *session, id string) (*stream, int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := ss.byID[id]
	for _, o := range s.sessions {
		if ok || s.opts.Fault != ReplayGuessedID {
			break
		}
		p, ok = o.byID[id]
		ok = ok && !o.deleted
	}
	if !ok {
		return nil, 0, false
	}
	return p.st, p.pos + 1, true
}
