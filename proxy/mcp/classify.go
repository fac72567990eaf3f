package mcp

import (
	"errors"
	"mime"
	"net/http"
	"net/url"
	"strings"
)

// Request is an HTTP request as fray classifies it. The zero value is an
// exchange of StreamAny with nothing known.
type Request struct {
	// Stream is the kind of exchange the request opens.
	Stream StreamType
	// Session is the Mcp-Session-Id header, or for a POST to a legacy
	// message endpoint the session id its query carries; "" when none.
	Session string
	// LastEventID is the Last-Event-ID header when HasLastEventID.
	LastEventID    string
	HasLastEventID bool
	// Protocol is the Mcp-Protocol-Version header, "" when absent.
	Protocol string
}

// Legacy says which paths fray has seen the 2024-11-05 transport use: the
// GET paths whose stream announced an endpoint, and the endpoints clients
// POST messages to. Implementations must be safe for concurrent use.
type Legacy interface {
	// SSEPath reports whether path is the SSE path of a legacy server.
	SSEPath(path string) bool
	// MessagePath reports whether path is a legacy message endpoint, and
	// returns the session id the query names.
	MessagePath(path string, query url.Values) (session string, ok bool)
}

// Classify says what a request is from its method, URL and header; rpc is
// the JSON-RPC kind of the first message of its body (RPCNone for none or
// no body), and legacy what fray has learnt of the legacy transport (nil:
// nothing).
//
//   - POST to a legacy message endpoint: StreamLegacy, with the session of
//     its query; any other POST holding JSON-RPC: StreamPost; a POST that
//     holds none (an OAuth token or registration request): StreamOther.
//   - GET of a path under /.well-known/ (OAuth and other discovery), or
//     whose Accept header rules out text/event-stream: StreamOther; with a
//     Last-Event-ID header: StreamResume; of a legacy SSE path:
//     StreamLegacy; otherwise: StreamGet, the standalone stream.
//   - Anything else (DELETE, OPTIONS...): StreamOther.
func Classify(method string, u *url.URL, h http.Header, rpc RPCKind, legacy Legacy) Request {
	r := Request{Session: h.Get(HeaderSession), Protocol: h.Get(HeaderProtocol)}
	if v, ok := h[HeaderLastEventID]; ok {
		r.HasLastEventID = true
		if len(v) > 0 {
			r.LastEventID = v[0]
		}
	}
	switch method {
	case http.MethodPost:
		r.Stream = StreamPost
		if legacy != nil {
			if sid, ok := legacy.MessagePath(u.Path, u.Query()); ok {
				r.Stream, r.Session = StreamLegacy, sid
				return r
			}
		}
		if rpc == RPCNone {
			r.Stream = StreamOther
		}
	case http.MethodGet:
		switch {
		case strings.HasPrefix(u.Path, "/.well-known/") || !AcceptsEventStream(h):
			r.Stream = StreamOther
		case r.HasLastEventID:
			r.Stream = StreamResume
		case legacy != nil && legacy.SSEPath(u.Path):
			r.Stream = StreamLegacy
		default:
			r.Stream = StreamGet
		}
	default:
		r.Stream = StreamOther
	}
	return r
}

// AcceptsEventStream reports whether a request's Accept header admits
// text/event-stream. A request without one admits anything.
func AcceptsEventStream(h http.Header) bool {
	vals := h.Values("Accept")
	if len(vals) == 0 {
		return true
	}
	for _, v := range vals {
		for part := range strings.SplitSeq(v, ",") {
			mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			switch mt {
			case "text/event-stream", "text/*", "*/*":
				return true
			}
		}
	}
	return false
}

// MediaType returns the lower-cased media type of a Content-Type value,
// without its parameters ("" when there is none); a value whose parameters
// do not parse still gives its media type.
func MediaType(contentType string) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil && !errors.Is(err, mime.ErrInvalidMediaParameter) {
		return ""
	}
	return mt
}

// IsEventStream reports whether a Content-Type value is text/event-stream.
func IsEventStream(contentType string) bool { return MediaType(contentType) == "text/event-stream" }
