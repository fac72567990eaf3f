package scripted

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// refuse answers a message the server will not take: one POSTed with
// another Content-Type than application/json is refused with 415 and
// the session goes on; with DieOnBadMessage it is refused with 400 and
// the session's message channel dies, so that the session's later
// messages get 503. It reports whether it answered.
func (s *LegacyServer) refuse(w http.ResponseWriter, r *http.Request) bool {
	id := r.URL.Query().Get("sessionId")
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead[id] {
		http.Error(w, "No active SSE connection", http.StatusServiceUnavailable)
		return true
	}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		return false
	}
	if s.opts.Fault == DieOnBadMessage {
		s.dead[id] = true
		http.Error(w, "invalid message", http.StatusBadRequest)
		return true
	}
	http.Error(w, "messages are application/json", http.StatusUnsupportedMediaType)
	return true
}

// refusedPost is a message the server answered with another status than
// 202 Accepted.
type refusedPost struct {
	endpoint string
	status   int
}

func (e refusedPost) Error() string { return fmt.Sprintf("POST %s: status %d", e.endpoint, e.status) }

// postAgainIfRefused posts body, and once more in the same session when
// the server refused it with a 4xx: a refused message is that message's
// failure, not the session's, as a caller that retries a failed call
// sees it.
func postAgainIfRefused(post func(string) error, body string) error {
	err := post(body)
	var r refusedPost
	if errors.As(err, &r) && r.status/100 == 4 && r.status != http.StatusNotFound {
		return post(body)
	}
	return err
}
