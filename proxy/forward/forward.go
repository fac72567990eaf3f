package forward

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/jsonrpc"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// errFaultClosed is the cancellation cause when a fault ends a stream on
// purpose: the upstream request is cancelled, and the client's response ends
// cleanly rather than abruptly.
var errFaultClosed = errors.New("proxy: stream closed by a fault")

// ServeHTTP forwards one exchange to the upstream, applying the fault plan.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !p.forUpstream(w, r) || !p.notLooped(w, r) {
		return
	}
	// The body is read before the exchange is admitted: a client that
	// trickles it holds no slot, only its connection, and that only
	// until RequestBodyTimeout.
	body, ok := p.readBody(w, r)
	if !ok || !p.admit(w, r) {
		return
	}
	defer p.leave()
	ex := &exchange{seq: p.exchSeq.Add(1), body: body}
	ex.SinceRun = p.since()
	p.classify(r, ex)
	p.endHoldsFor(ex)
	p.log.LogAttrs(r.Context(), slog.LevelDebug, "exchange", ex.logAttrs()...)

	var act faults.ExchangeAction
	if plan := p.opts.Faults; plan != nil {
		act = plan.Exchange(&ex.Exchange)
		p.logFired(r.Context(), ex, "exchange", act.Fired)
	}
	p.observeRequest(r, ex, &act)
	if act.Latency > 0 && !sleep(r.Context(), p.clock, act.Latency) {
		p.observeEnd(ex, &observe.End{Cause: observe.ClientGone})
		return
	}
	if p.answerInstead(w, r, ex, &act) {
		return
	}
	ctx, cancel := p.upstreamContext(r, ex)
	defer func() {
		if !ex.held.Load() {
			cancel(nil)
		}
	}()
	stopHeadTimer := p.headTimer(cancel)
	p.noteDoubledPath(r, ex)
	resp, err := p.roundTrip(p.outRequest(ctx, r, ex, &act), ex)
	if !stopHeadTimer() {
		// The timer fired: even a head that came just after it belongs to
		// a request already cancelled.
		if err == nil {
			resp.Body.Close()
		}
		err = context.Cause(ctx)
	}
	if err != nil {
		p.badGateway(w, r, ex, err)
		return
	}
	defer func() {
		if !ex.held.Load() {
			resp.Body.Close()
		}
	}()
	p.learnSession(ex, resp)
	p.noteUpstreamError(r, ex, resp)
	removeHopHeaders(resp.Header)
	for _, h := range act.StripResponseHeaders {
		resp.Header.Del(h)
	}
	if isEventStream(resp.Header) && identityEncoded(resp.Header) {
		p.pump(w, r, ex, resp, cancel)
		return
	}
	if isEventStream(resp.Header) {
		p.log.LogAttrs(r.Context(), slog.LevelWarn, "event stream has a content coding; passing it through unparsed",
			append(ex.logAttrs(), slog.String("content_encoding", resp.Header.Get("Content-Encoding")))...)
	}
	if _, ok := resp.Header["Content-Type"]; !ok {
		// No type from the upstream: none to the client either, rather
		// than one the server would sniff from the first bytes.
		w.Header()["Content-Type"] = nil
	}
	p.copyResponse(w, r, ex, resp)
}

// forUpstream refuses what would make fray a door into other addresses:
// CONNECT, and an absolute-form request target (`GET http://host/ HTTP/1.1`)
// naming a host other than fray itself. Neither is forwarded anywhere. It
// reports whether the request may go on.
func (p *Proxy) forUpstream(w http.ResponseWriter, r *http.Request) bool {
	// Methods are case-sensitive, so "connect" is not CONNECT; but a
	// server or intermediary that folds case would make it one, and no
	// MCP client sends it: refused in any case.
	if strings.EqualFold(r.Method, http.MethodConnect) {
		plainError(w, http.StatusMethodNotAllowed, "fray forwards only to its upstream; CONNECT is not supported")
		return false
	}
	// The preface of HTTP/2 with prior knowledge over plain text (h2c):
	// fray serves HTTP/2 over TLS only, and the preface is no request.
	if r.Method == "PRI" && r.ProtoMajor == 2 {
		w.Header().Set("Connection", "close")
		plainError(w, http.StatusHTTPVersionNotSupported, "fray serves HTTP/2 over TLS only; plain-text HTTP/2 (h2c) is not supported")
		return false
	}
	if r.URL.Host == "" || addressedToFray(r) {
		return true
	}
	p.log.Warn("request names another host; refused, fray forwards only to its upstream",
		"method", r.Method, "host", r.URL.Host)
	plainError(w, http.StatusMisdirectedRequest,
		fmt.Sprintf("fray: forwards only to its upstream; the request names host %q", r.URL.Host))
	return false
}

// notLooped refuses a request that already went through this proxy (its
// Via names it): the upstream leads back to fray, so forwarding it would
// loop until something gave out. It answers 508 Loop Detected with a
// one-line reason and logs it, and reports whether the request may go on.
func (p *Proxy) notLooped(w http.ResponseWriter, r *http.Request) bool {
	for _, v := range r.Header.Values("Via") {
		for hop := range strings.SplitSeq(v, ",") {
			if f := strings.Fields(hop); len(f) >= 2 && f[1] == p.via {
				p.log.Error("the upstream leads back to fray; refused the looping request with 508: point --upstream at the MCP server, not at fray",
					"upstream", p.upstream.String(), "method", r.Method, "path", r.URL.Path)
				plainError(w, http.StatusLoopDetected,
					fmt.Sprintf("fray: loop detected: the upstream %s leads back to this fray; point --upstream at the MCP server", p.upstream))
				return false
			}
		}
	}
	return true
}

// upstreamContext is the context of the upstream request: the client's,
// so that a client that goes away cancels it at once, except that under a
// fault plan a stream may be held (hold.go) past its client, and is then
// the holder's to end.
func (p *Proxy) upstreamContext(r *http.Request, ex *exchange) (context.Context, context.CancelCauseFunc) {
	if p.opts.Faults == nil {
		return context.WithCancelCause(r.Context())
	}
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(r.Context()))
	stop := context.AfterFunc(r.Context(), func() {
		if !ex.held.Load() {
			cancel(context.Cause(r.Context()))
		}
	})
	return ctx, func(cause error) {
		stop()
		cancel(cause)
	}
}

// errNoHead is the cancellation cause of an upstream request whose
// response head did not come within Options.ResponseHeaderTimeout.
var errNoHead = errors.New("no response head")

// headTimer arms Options.ResponseHeaderTimeout: when it passes, cancel is
// called with errNoHead. stop disarms it and reports whether it had not
// fired.
func (p *Proxy) headTimer(cancel context.CancelCauseFunc) (stop func() bool) {
	d := p.opts.ResponseHeaderTimeout
	if d <= 0 {
		return func() bool { return true }
	}
	return p.clock.AfterFunc(d, func() { cancel(fmt.Errorf("%w within %v", errNoHead, d)) })
}

// answerInstead carries out the exchange faults that answer the client
// without forwarding. It reports whether the exchange is over.
func (p *Proxy) answerInstead(w http.ResponseWriter, r *http.Request, ex *exchange, act *faults.ExchangeAction) bool {
	switch {
	case act.Status != 0:
		copyHeader(w.Header(), act.Header)
		if len(act.Body) > 0 && w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		}
		w.WriteHeader(act.Status)
		_, _ = w.Write(act.Body)
		p.observeResponse(ex, &observe.Response{Status: act.Status, Origin: observe.FromFault, Header: w.Header()}, act.Fired)
	case act.DropRequest && act.Hang:
		<-r.Context().Done()
	case act.DropRequest:
		w.WriteHeader(http.StatusAccepted)
		p.observeResponse(ex, &observe.Response{Status: http.StatusAccepted, Origin: observe.FromFault, Header: w.Header()}, act.Fired)
	default:
		return false
	}
	p.observeEnd(ex, &observe.End{Cause: observe.FaultAnswered})
	return true
}

// outRequest builds the request to the upstream: the client's, under the
// upstream base URL, minus hop-by-hop fields, with the exchange faults'
// header changes.
func (p *Proxy) outRequest(ctx context.Context, r *http.Request, ex *exchange, act *faults.ExchangeAction) *http.Request {
	out := r.Clone(ctx)
	out.RequestURI = ""
	u := *p.upstream
	u.Path, u.RawPath = p.upstreamPath(r.URL)
	u.RawQuery = r.URL.RawQuery
	out.URL = &u
	out.Host = ""
	if !addressedToFray(r) {
		// A Host that does not name fray (a DNS-rebinding attempt, say)
		// is what the server would have seen direct: its Host checks
		// must see it too.
		out.Host = r.Host
	}
	out.Close = false
	keepTrailers := teTrailers(r.Header)
	removeHopHeaders(out.Header)
	if keepTrailers {
		out.Header.Set("Te", "trailers")
	}
	out.Header.Add("Via", fmt.Sprintf("%d.%d %s", r.ProtoMajor, r.ProtoMinor, p.via))
	if ex.body != nil {
		out.Body = io.NopCloser(bytes.NewReader(ex.body))
		out.ContentLength = int64(len(ex.body))
		out.GetBody = nil
	} else if r.ContentLength == 0 {
		out.Body = http.NoBody
	}
	if act.StripLastEventID {
		out.Header.Del(mcp.HeaderLastEventID)
	}
	if act.HasLastEventID {
		out.Header.Set(mcp.HeaderLastEventID, act.SetLastEventID)
	}
	for _, h := range act.StripRequestHeaders {
		out.Header.Del(h)
	}
	for _, h := range act.SetRequestHeaders {
		out.Header.Set(h.Name, h.Value)
	}
	return out
}

// addressedToFray reports whether the request's Host names fray's own
// listener: its port is the one the request came in on, and its host is a
// loopback name, the address the connection reached, or this machine's
// name. Such a Host is replaced by the upstream's, as a client talking to
// the server direct would have sent; any other is forwarded untouched.
func addressedToFray(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return true
	}
	lhost, lport, err := net.SplitHostPort(local.String())
	if err != nil {
		return true
	}
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		host, port = r.Host, "80"
		if r.TLS != nil {
			port = "443"
		}
	}
	if port != lport {
		return false
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") || host == lhost {
		return true
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback() || ip.IsUnspecified()
	}
	name, err := os.Hostname()
	return err == nil && strings.EqualFold(host, name)
}

// upstreamPath maps a client path under the upstream's base path. The
// root maps to the base itself, so that `--upstream http://h/mcp` serves
// the endpoint at fray's `/` without a trailing slash the server may not
// route. The escaped form is kept when the client sent one.
func (p *Proxy) upstreamPath(cu *url.URL) (path, rawPath string) {
	if cu.Path == "/" || cu.Path == "" {
		if p.upstream.Path == "" {
			return "/", ""
		}
		return p.upstream.Path, p.upstream.RawPath
	}
	path = p.upstream.Path + cu.Path
	if cu.RawPath == "" && p.upstream.RawPath == "" {
		return path, ""
	}
	return path, p.upstream.EscapedPath() + cu.EscapedPath()
}

// clientPathUnder maps an upstream path back to the path a client uses at
// fray, for an upstream whose base path is base, in the same form (decoded
// or escaped) as upstreamPath: the inverse of upstreamPath. It reports
// false for a path outside the base.
func clientPathUnder(base, upstreamPath string) (string, bool) {
	if base == "" {
		return upstreamPath, true
	}
	if upstreamPath == base {
		return "/", true
	}
	if rest, ok := strings.CutPrefix(upstreamPath, base); ok && strings.HasPrefix(rest, "/") {
		return rest, true
	}
	return "", false
}

// learnSession updates the session table from a response: the session id
// an initialize answer assigns, a DELETE that ended a session, and the
// protocol revision an initialize result negotiated (JSON answers; SSE ones
// are read in the pump).
func (p *Proxy) learnSession(ex *exchange, resp *http.Response) {
	if sid := resp.Header.Get(mcp.HeaderSession); sid != "" && ex.Session == "" {
		ex.Session = sid
		ex.SessionSeq, _, _ = p.sessions.touch(sid, ex.Stream)
	}
	if ex.Method == http.MethodDelete && ex.Session != "" && resp.StatusCode < 300 {
		p.sessions.forget(ex.Session)
	}
}

// noteInitialize records the protocol revision from an initialize response.
func (p *Proxy) noteInitialize(ex *exchange, msg []byte) {
	if v, ok := jsonrpc.ProtocolVersion(msg); ok {
		// A revision is a date; a server may write anything there.
		v = observe.IDKey(v)
		ex.protocol = v
		p.sessions.setProtocol(ex.Session, v)
		p.log.Debug("protocol negotiated", "exchange", ex.seq, "session", ex.SessionSeq, "protocol", v)
	}
}

// badGateway answers a failed upstream round trip with 502 (504 when the
// response head did not come in time) and a one-line reason, unless the
// client has already gone.
func (p *Proxy) badGateway(w http.ResponseWriter, r *http.Request, ex *exchange, err error) {
	if r.Context().Err() != nil {
		p.log.LogAttrs(r.Context(), slog.LevelDebug, "client went away before the upstream answered", ex.logAttrs()...)
		p.observeEnd(ex, &observe.End{Cause: observe.ClientGone})
		return
	}
	p.log.LogAttrs(r.Context(), slog.LevelError, "upstream failed",
		append(ex.logAttrs(), slog.String("upstream", p.upstream.String()), slog.String("error", err.Error()))...)
	status := http.StatusBadGateway
	if errors.Is(err, errNoHead) {
		status = http.StatusGatewayTimeout
	}
	plainError(w, status, fmt.Sprintf("fray: upstream %s: %s", p.upstream, oneLine(err.Error())))
	p.observeResponse(ex, &observe.Response{Status: status, Origin: observe.FromFray, Header: w.Header()}, nil)
	p.observeEnd(ex, &observe.End{Cause: observe.UpstreamFailed, Error: oneLine(err.Error())})
}

// readBody reads the body of a POST whole, to classify it, within
// Options.RequestBodyTimeout. Other requests' bodies stream to the
// upstream as they come; they get nil. It reports false when it answered
// the client instead.
func (p *Proxy) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody {
		return nil, true
	}
	d := p.opts.RequestBodyTimeout
	rc := http.NewResponseController(w)
	if d > 0 {
		// A deadline on the connection (the stream, over HTTP/2): the
		// real time, since it is the network's.
		_ = rc.SetReadDeadline(time.Now().Add(d))
	}
	body, err := readBounded(r.Body, p.opts.MaxRequestBody)
	if err != nil {
		// The deadline stays: net/http reads what is left of the body
		// after the answer (up to 256 KiB, to keep the connection), and
		// a body that missed its deadline must not hold the connection
		// past it. The read fails at once and the connection closes.
		p.requestBodyError(w, r, err, d)
		return nil, false
	}
	if d > 0 {
		_ = rc.SetReadDeadline(time.Time{})
	}
	return body, true
}

func (p *Proxy) requestBodyError(w http.ResponseWriter, r *http.Request, err error, timeout time.Duration) {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		p.log.Warn("request body did not arrive in time; refused", "method", r.Method, "path", r.URL.Path, "limit", timeout)
		w.Header().Set("Connection", "close")
		plainError(w, http.StatusRequestTimeout,
			fmt.Sprintf("fray: the request body did not arrive within %v", timeout))
		return
	}
	if errors.Is(err, errBodyTooLarge) {
		p.log.Warn("request body too large", "method", r.Method, "path", r.URL.Path, "limit", p.opts.MaxRequestBody)
		plainError(w, http.StatusRequestEntityTooLarge,
			fmt.Sprintf("fray: request body exceeds the limit of %d bytes", p.opts.MaxRequestBody))
		return
	}
	p.log.Debug("reading the request body failed", "method", r.Method, "path", r.URL.Path, "error", err)
	plainError(w, http.StatusBadRequest, "fray: reading the request body: "+oneLine(err.Error()))
}

// logFired logs fault decisions when asked to.
func (p *Proxy) logFired(ctx context.Context, ex *exchange, where string, fired []faults.Firing) {
	if !p.opts.LogFaults || len(fired) == 0 {
		return
	}
	for _, f := range fired {
		p.log.LogAttrs(ctx, slog.LevelInfo, "fault",
			append(ex.logAttrs(), slog.String("at", where), slog.Int("fault", f.Index), slog.String("kind", f.Kind))...)
	}
}

func plainError(w http.ResponseWriter, code int, msg string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, msg+"\n")
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func teTrailers(h http.Header) bool {
	for _, v := range h.Values("Te") {
		for part := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(part), "trailers") {
				return true
			}
		}
	}
	return false
}

var errBodyTooLarge = errors.New("request body too large")

// readBounded reads all of r, failing with errBodyTooLarge past max bytes.
func readBounded(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, errBodyTooLarge
	}
	return b, nil
}
