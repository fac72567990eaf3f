package scripted

import "net/http"

// More server misbehaviours, each one a released server was found to
// have (the probe catalog names them). Their values start at 48, apart
// from the other blocks of ServerFault.
const (
	// RefuseReopenedGET answers a GET without Last-Event-ID with 400 Bad
	// Request once the session has had a standalone stream, as a server
	// that keeps the old stream registered after its client went away
	// does (server.get-stream-or-405).
	RefuseReopenedGET ServerFault = 48 + iota
	// DieOnBadMessage (LegacyServer): a message POSTed with another
	// Content-Type than application/json is refused with 400 and ends
	// the session's message channel, so that every later POST of the
	// session is answered 503 while its SSE stream stays open
	// (server.session-survives-refusal).
	DieOnBadMessage
)

// refuseReopen acts out RefuseReopenedGET: it answers the GET itself and
// reports true when the session already had a standalone stream.
func (s *Server) refuseReopen(w http.ResponseWriter, ss *session) bool {
	if s.opts.Fault != RefuseReopenedGET {
		return false
	}
	s.mu.Lock()
	had := false
	for _, st := range ss.streams {
		had = had || st.reqID == ""
	}
	s.mu.Unlock()
	if had {
		http.Error(w, "Session registration failed: session already exists", http.StatusBadRequest)
	}
	return had
}
