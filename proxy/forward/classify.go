package forward

import (
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/frayproxy/fray/proxy/jsonrpc"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// exchange is one classified HTTP exchange, carried from the request to
// the end of its response.
type exchange struct {
	mcp.Exchange
	seq      uint64 // proxy-wide exchange number, for logs
	protocol string // protocol revision in force, "" if unknown
	body     []byte // the JSON-RPC request body, when read to classify
	rpcCount int    // messages in the body (a batch has several)
	initReq  bool   // the body holds an initialize request
	// held: the stream was handed to a holder (hold.go), which owns the
	// upstream request from then on.
	held atomic.Bool
}

// classify fills ex from the client's request and (for a POST) its body.
func (p *Proxy) classify(r *http.Request, ex *exchange) {
	meta := p.classifyBody(ex)
	c := mcp.Classify(r.Method, r.URL, r.Header, ex.RPCKind, &p.legacy)
	ex.Method = r.Method
	ex.Path = r.URL.Path
	ex.Header = r.Header
	ex.Stream = c.Stream
	ex.Session = c.Session
	var known string
	ex.SessionSeq, ex.StreamSeq, known = p.sessions.touch(ex.Session, ex.Stream)
	ex.protocol = mcp.RequestRevision(c.Protocol, meta, known)
}

// classifyBody reads the JSON-RPC identity of the first message of a POST
// body (and counts a batch's messages). It returns the protocol revision
// the first message names in its _meta, "" when none.
func (p *Proxy) classifyBody(ex *exchange) (meta string) {
	if len(ex.body) == 0 {
		return ""
	}
	first := true
	jsonrpc.ScanBatch(ex.body, func(m jsonrpc.Message) bool {
		ex.rpcCount++
		if first {
			first = false
			ex.RPCKind = m.Kind
			ex.RPCMethod = string(m.Method)
			ex.RPCID = string(m.ID)
			if n := m.TargetName(); n != nil {
				ex.RPCName = jsonrpc.Unquote(n)
			}
			if v := m.MetaProtocolVersion(); v != nil {
				meta = jsonrpc.Unquote(v)
			}
		}
		if m.Kind == mcp.RPCRequest && string(m.Method) == "initialize" {
			ex.initReq = true
		}
		return true
	})
	return meta
}

// logAttrs describes the exchange for a log line.
func (ex *exchange) logAttrs() []slog.Attr {
	a := []slog.Attr{
		slog.Uint64("exchange", ex.seq),
		slog.String("method", ex.Method),
		slog.String("path", ex.Path),
		slog.String("stream", ex.Stream.String()),
	}
	if ex.SessionSeq > 0 {
		a = append(a, slog.Int("session", ex.SessionSeq))
	}
	if ex.RPCKind != mcp.RPCNone {
		a = append(a, slog.String("rpc", ex.RPCKind.String()))
		if ex.RPCMethod != "" {
			a = append(a, slog.String("rpc_method", ex.RPCMethod))
		}
		if ex.RPCName != "" {
			a = append(a, slog.String("rpc_name", ex.RPCName))
		}
		if ex.RPCID != "" {
			a = append(a, slog.String("rpc_id", ex.RPCID))
		}
		if ex.rpcCount > 1 {
			a = append(a, slog.Int("batch", ex.rpcCount))
		}
	}
	if ex.Stream == mcp.StreamResume {
		a = append(a, slog.Bool("last_event_id", true))
	}
	if ex.protocol != "" {
		a = append(a, slog.String("protocol", ex.protocol))
	}
	return a
}

// legacyPaths remembers the paths of the 2024-11-05 transport that fray has
// seen: the GET paths whose stream announced an endpoint, and the endpoint
// paths clients POST to. Bounded; safe for concurrent use.
type legacyPaths struct {
	mu       sync.RWMutex
	sse      map[string]bool
	messages map[string]bool
}

const maxLegacyPaths = 1024

// The paths are kept by their observe.IDKey: an endpoint event of a
// megabyte makes a path of one.
func (l *legacyPaths) addSSE(path string) { l.add(&l.sse, observe.IDKey(path)) }

func (l *legacyPaths) addMessages(path string) { l.add(&l.messages, observe.IDKey(path)) }

func (l *legacyPaths) add(m *map[string]bool, path string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if *m == nil {
		*m = make(map[string]bool)
	}
	if len(*m) < maxLegacyPaths {
		(*m)[path] = true
	}
}

// SSEPath implements mcp.Legacy.
func (l *legacyPaths) SSEPath(path string) bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.sse[observe.IDKey(path)]
}

// MessagePath implements mcp.Legacy: whether path is a legacy message
// endpoint, and the session id its query carries.
func (l *legacyPaths) MessagePath(path string, q url.Values) (string, bool) {
	l.mu.RLock()
	ok := l.messages[observe.IDKey(path)]
	l.mu.RUnlock()
	if !ok {
		return "", false
	}
	return legacySessionID(q), true
}

// legacySessionID finds the session id in an endpoint's query: the
// parameter names the SDKs use.
func legacySessionID(q map[string][]string) string {
	for _, k := range []string{"sessionId", "session_id", "sessionid"} {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
	}
	for k, v := range q {
		if strings.Contains(strings.ToLower(k), "session") && len(v) > 0 {
			return v[0]
		}
	}
	return ""
}
