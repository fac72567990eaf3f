package forward

import (
	"errors"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"

	"github.com/frayproxy/fray/proxy/mcp"
)

// hopHeaders are the hop-by-hop fields of RFC 9110 section 7.6.1 (and the
// historical ones that proxies still see); they describe one connection and
// are never forwarded.
var hopHeaders = []string{
	"Connection",
	"Proxy-Connection",
	"Keep-Alive",
	"Proxy-Authenticate",
	"Proxy-Authorization",
	"Te",
	"Trailer",
	"Transfer-Encoding",
	"Upgrade",
}

// removeHopHeaders deletes the hop-by-hop fields of h, and every field that
// its Connection header names, as a proxy must.
func removeHopHeaders(h http.Header) {
	for _, v := range h["Connection"] {
		for name := range strings.SplitSeq(v, ",") {
			if name = textproto.TrimString(name); name != "" {
				h.Del(name)
			}
		}
	}
	for _, name := range hopHeaders {
		h.Del(name)
	}
}

// copyHeader adds every value of src to dst.
func copyHeader(dst, src http.Header) {
	for k, vv := range src {
		dst[k] = append(dst[k], vv...)
	}
}

// isEventStream reports whether a response header announces an SSE body
// (text/event-stream); identityEncoded says whether fray can parse it.
func isEventStream(h http.Header) bool { return mcp.IsEventStream(h.Get("Content-Type")) }

// identityEncoded reports whether a body has no content coding.
func identityEncoded(h http.Header) bool {
	ce := strings.TrimSpace(h.Get("Content-Encoding"))
	return ce == "" || strings.EqualFold(ce, "identity")
}

// redactQuery returns raw, a URL from the traffic, fit for a log line: every
// query value is replaced, because legacy endpoints carry the session id
// there and a session id is a credential. Parameter names are kept.
func redactQuery(raw string) string {
	base, query, ok := strings.Cut(raw, "?")
	if !ok {
		return raw
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return base + "?(query withheld)"
	}
	for k := range q {
		q[k] = []string{"redacted"}
	}
	return base + "?" + q.Encode()
}

// withoutURL returns the reason of a *url.Error without the URL it quotes,
// which may carry a session id; other errors are returned as they are.
func withoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
