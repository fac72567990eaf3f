package trace

import (
	"net/http"
	"strconv"

	"github.com/frayproxy/fray/mcp"
)

// sessionHeader is the header whose redaction also hides session ids
// wherever a trace names them.
const sessionHeader = mcp.HeaderSession

// redactor decides what of a header or a session id a trace may hold. It
// is used under the Writer's lock.
type redactor struct {
	names map[string]bool
	// sessions maps each session id to its stand-in, "session-N" in order
	// of first appearance, when Mcp-Session-Id is redacted; nil otherwise.
	// A stand-in, not a blank, so that checks and replay still tell
	// sessions apart.
	sessions map[string]string
}

// secret reports whether the values of header name are replaced.
func (r *redactor) secret(name string) bool {
	if len(r.names) == 0 {
		return false
	}
	return r.names[name] || r.names[http.CanonicalHeaderKey(name)]
}

// value is what the trace holds for one value of header name.
func (r *redactor) value(name, v string) string {
	if !r.secret(name) {
		return v
	}
	if r.sessions != nil && http.CanonicalHeaderKey(name) == sessionHeader {
		return r.session(v)
	}
	return Redacted
}

// session is what the trace holds for a session id.
func (r *redactor) session(id string) string {
	if r.sessions == nil || id == "" {
		return id
	}
	s, ok := r.sessions[id]
	if !ok {
		s = "session-" + strconv.Itoa(len(r.sessions)+1)
		r.sessions[id] = s
	}
	return s
}
