package scripted

import "net/http"

// More server misbehaviours, each one a released server was found to
// have (the probe catalog names them). Their values start at 80, apart
// from the other blocks of ServerFault.
const (
	// EmptyResumeWhenDone answers a resumption of a call's stream whose
	// call has finished with 200 and a stream that ends at once, as a
	// server that let go of the stream's channel and whose replay then
	// fails does: the events after Last-Event-ID, the result among them,
	// are never sent again (server.replay-complete).
	EmptyResumeWhenDone ServerFault = 80 + iota
)

// emptyResume acts out EmptyResumeWhenDone on a resumption of st: it
// answers the GET itself and reports true, or reports false.
func (s *Server) emptyResume(w http.ResponseWriter, st *stream) bool {
	if s.opts.Fault != EmptyResumeWhenDone {
		return false
	}
	s.mu.Lock()
	done := st.done && st.reqID != ""
	s.mu.Unlock()
	if !done {
		return false
	}
	startSSE(w)
	return true
}
