package trace

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/frayproxy/fray/proxy/mcp"
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
	// order holds the keys of sessions in order of first appearance, a
	// ring of at most maxStandIns; next is the slot to reuse, seq the
	// stand-ins given so far.
	order []string
	next  int
	seq   int
}

// maxStandIns bounds the session stand-ins a Writer remembers, as fray's
// own session table is bounded: past it the oldest is forgotten, and a
// session seen again after that gets a new stand-in. Ids longer than
// maxKeyLen are remembered by their digest, so that the map is bounded in
// bytes as well as in count.
const (
	maxStandIns = 1 << 16
	maxKeyLen   = 256
)

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
	key := id
	if len(key) > maxKeyLen {
		sum := sha256.Sum256([]byte(id))
		key = hex.EncodeToString(sum[:])
	}
	if s, ok := r.sessions[key]; ok {
		return s
	}
	r.seq++
	s := "session-" + strconv.Itoa(r.seq)
	if len(r.order) < maxStandIns {
		r.order = append(r.order, key)
	} else {
		delete(r.sessions, r.order[r.next])
		r.order[r.next] = key
		r.next = (r.next + 1) % maxStandIns
	}
	r.sessions[key] = s
	return s
}

// endpoint returns the bytes of a legacy endpoint block with the values of
// its URL's query replaced: a session parameter's by the session's
// stand-in, any other by Redacted (an api_key rides there too). The query
// is the rest of the data line after its '?'. b is returned as it is when
// session ids are not redacted or it has no query.
func (r *redactor) endpoint(b []byte) []byte {
	if r.sessions == nil {
		return b
	}
	q := bytes.IndexByte(b, '?')
	if q < 0 {
		return b
	}
	end := q + 1
	for end < len(b) && b[end] != '\n' && b[end] != '\r' {
		end++
	}
	out := append([]byte(nil), b[:q+1]...)
	for i, pair := range strings.Split(string(b[q+1:end]), "&") {
		if i > 0 {
			out = append(out, '&')
		}
		k, v, ok := strings.Cut(pair, "=")
		out = append(out, k...)
		if !ok {
			continue
		}
		out = append(out, '=')
		if strings.Contains(strings.ToLower(k), "session") {
			if u, err := url.QueryUnescape(v); err == nil {
				v = u
			}
			out = append(out, url.QueryEscape(r.session(v))...)
		} else {
			out = append(out, Redacted...)
		}
	}
	return append(out, b[end:]...)
}
