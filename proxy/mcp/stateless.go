package mcp

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
)

// The names 2026-07-28 gives to what replaced sessions and the standalone
// stream: the _meta keys every request carries, the long-lived listen
// request and its first notification, and the error a server answers a
// header that disagrees with the body with.
const (
	// MetaProtocolVersion is the params._meta key that carries a
	// request's protocol revision.
	MetaProtocolVersion = "io.modelcontextprotocol/protocolVersion"
	// MethodListen opens a subscription stream, the successor of the
	// standalone GET stream.
	MethodListen = "subscriptions/listen"
	// MethodListenAcknowledged is the first message of every
	// subscription stream.
	MethodListenAcknowledged = "notifications/subscriptions/acknowledged"
	// ErrHeaderMismatch is the JSON-RPC error code of a request whose
	// routing headers disagree with its body.
	ErrHeaderMismatch = -32020
	// ErrUnsupportedVersion is the JSON-RPC error code of
	// UnsupportedProtocolVersionError: the server does not implement the
	// revision the request names.
	ErrUnsupportedVersion = -32022
	// HeaderAccelBuffering is the response header that asks a reverse
	// proxy not to buffer a stream ("no").
	HeaderAccelBuffering = "X-Accel-Buffering"
)

// Stateless reports whether rev is 2026-07-28 or later: no sessions, no
// resumption, a cut stream cancels its request.
func Stateless(rev string) bool { return rev >= RevStateless }

// RequestRevision says which revision one request speaks: its
// Mcp-Protocol-Version header when it has one, else the revision its
// _meta names, else the one its session negotiated ("" when none is
// known). Revisions are per request from 2026-07-28 on, so one endpoint
// serves both eras.
func RequestRevision(header, meta, session string) string {
	switch {
	case header != "":
		return header
	case meta != "":
		return meta
	}
	return session
}

// NameParam returns the params member that Mcp-Name mirrors for method
// ("name" or "uri"), and whether method has one.
func NameParam(method string) (string, bool) {
	switch method {
	case "tools/call", "prompts/get":
		return "name", true
	case "resources/read":
		return "uri", true
	}
	return "", false
}

// base64 sentinel of a header value that is not plain ASCII.
const (
	sentinelStart = "=?base64?"
	sentinelEnd   = "?="
)

// DecodeHeaderValue returns the value an Mcp-Name (or Mcp-Param-*)
// header stands for: the decoded Base64 sentinel form, or the value as
// it is. A sentinel that does not decode is returned as it is, with ok
// false.
func DecodeHeaderValue(v string) (string, bool) {
	if !strings.HasPrefix(v, sentinelStart) || !strings.HasSuffix(v, sentinelEnd) || len(v) < len(sentinelStart)+len(sentinelEnd) {
		return v, true
	}
	b, err := base64.StdEncoding.DecodeString(v[len(sentinelStart) : len(v)-len(sentinelEnd)])
	if err != nil {
		return v, false
	}
	return string(b), true
}

// RoutingMismatch compares a request's Mcp-Method and Mcp-Name headers
// with its body's method and name (params.name or params.uri; hasName
// false when the body has none) and says how they disagree, "" when they
// agree. A header is required for every request (Mcp-Method) and for the
// methods NameParam knows (Mcp-Name); a missing one disagrees. Header
// values are case-sensitive; an Mcp-Name in the Base64 sentinel form is
// compared decoded.
func RoutingMismatch(h http.Header, method, name string, hasName bool) string {
	vals, ok := h[HeaderMethod]
	switch {
	case !ok || len(vals) == 0:
		return "no Mcp-Method header"
	case vals[0] != method:
		return fmt.Sprintf("Mcp-Method %q, the body's method %q", vals[0], method)
	}
	if _, named := NameParam(method); !named {
		return ""
	}
	nv, ok := h[HeaderName]
	if !ok || len(nv) == 0 {
		if !hasName {
			return ""
		}
		return "no Mcp-Name header"
	}
	got, valid := DecodeHeaderValue(nv[0])
	switch {
	case !valid:
		return fmt.Sprintf("Mcp-Name %q is not valid Base64", nv[0])
	case !hasName:
		return fmt.Sprintf("Mcp-Name %q, the body names none", got)
	case got != name:
		return fmt.Sprintf("Mcp-Name %q, the body's %q", got, name)
	}
	return ""
}
