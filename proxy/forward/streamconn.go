package forward

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/frayproxy/fray/proxy/mcp"
)

// streamConns carries fray's long-lived GET event streams to a plain-http
// upstream, each on a connection of its own, with the HTTP/1.1 exchange done
// on the handler's goroutine:
//
//	handler goroutine: dial -> write the request -> read the head -> pump reads the body
//	context.AfterFunc(request context): close the connection
//
// http.Transport gives every connection a read loop and a write loop
// goroutine, a persistConn and two buffers, for the whole life of the
// stream; a stream idle for hours holds them all while carrying nothing.
// Here an idle stream holds its socket, a small read buffer and the body's
// state, and no goroutine but the handler's, which it holds anyway. This
// private client exists for one budget: at 10,000 idle streams fray holds
// no more memory per stream than httputil.ReverseProxy
// (docs/performance.md). The wire code is the
// standard library's (Request.Write, ReadResponse), so the upstream sees
// the bytes http.Transport would have sent. What the transport does better,
// reuse of keep-alive connections, a stream that lasts the life of its
// connection has no use for.
type streamConns struct {
	t *http.Transport
}

// useFor reports whether out goes on a connection of its own: a GET that
// MCP clients hold open as an event stream (the standalone GET, a resumed
// stream, a legacy SSE stream), with no body, to a plain-http upstream
// reached without a proxy, with a request the transport would not refuse.
// Everything else (POSTs, https with TLS and perhaps HTTP/2, which is
// already cheap per stream, proxies, requests the transport would refuse
// with its own error) keeps the transport.
func (s *streamConns) useFor(out *http.Request, stream mcp.StreamType) bool {
	if s == nil || out.Method != http.MethodGet || out.URL.Scheme != "http" {
		return false
	}
	switch stream {
	case mcp.StreamGet, mcp.StreamResume, mcp.StreamLegacy:
	default:
		return false
	}
	if out.Body != nil && out.Body != http.NoBody || !asciiHost(out.URL.Hostname()) {
		return false
	}
	if s.t.Proxy != nil {
		if u, err := s.t.Proxy(out); err != nil || u != nil {
			return false
		}
	}
	return validHeader(out.Header)
}

// roundTrip sends out to the upstream: on a connection of its own when
// the exchange is a long-lived event stream that can have one, through
// the transport otherwise.
func (p *Proxy) roundTrip(out *http.Request, ex *exchange) (*http.Response, error) {
	if p.conns.useFor(out, ex.Stream) {
		return p.conns.roundTrip(out)
	}
	return p.opts.Transport.RoundTrip(out)
}

// roundTrip sends req on a new connection and reads the response head.
// The connection is closed when the response's body is closed, or as soon
// as req's context ends, which also ends a wait for the head or a read of
// the body; errors that a cancellation caused are reported as its cause,
// as http.Transport reports them.
func (s *streamConns) roundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	conn, err := s.dial(ctx, upstreamAddr(req))
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	resp, wait, err := s.exchange(conn, req)
	if err != nil {
		stop()
		conn.Close()
		if cause := context.Cause(ctx); cause != nil {
			return nil, cause
		}
		return nil, err
	}
	resp.Body = &connBody{body: resp.Body, wait: wait, left: resp.ContentLength, conn: conn, ctx: ctx, stop: stop}
	return resp, nil
}

func (s *streamConns) dial(ctx context.Context, addr string) (net.Conn, error) {
	if s.t.DialContext != nil {
		return s.t.DialContext(ctx, "tcp", addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", addr)
}

// writers hold the request's write buffer for the moment of the write
// only: a stream's connection writes once.
var writers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, upstreamWriteBuffer) }}

// exchange writes req to conn and reads the response head, past any
// interim (1xx) response but 101, as http.Transport does, and within the
// transport's bound on the bytes of the heads. The connWait is what the
// body is read from, for the body to wait on (connBody.WaitRead).
func (s *streamConns) exchange(conn net.Conn, req *http.Request) (*http.Response, *connWait, error) {
	bw := writers.Get().(*bufio.Writer)
	bw.Reset(conn)
	err := req.Write(bw)
	if err == nil {
		err = bw.Flush()
	}
	bw.Reset(nil)
	writers.Put(bw)
	if err != nil {
		return nil, nil, err
	}
	n := maxHead(s.t)
	lim := &headLimit{conn: conn, left: n, max: n}
	br := bufio.NewReaderSize(lim, upstreamReadBuffer)
	if _, err := br.Peek(1); err != nil {
		return nil, nil, err
	}
	for {
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			return nil, nil, headError(lim, err)
		}
		if resp.StatusCode < 100 || resp.StatusCode > 199 || resp.StatusCode == http.StatusSwitchingProtocols {
			lim.left = -1
			return resp, &connWait{br: br, lim: lim}, nil
		}
	}
}

// headError is what http.Transport reports when reading a response head
// fails on a new connection: nothing at all read is the read's own error;
// a head cut short or malformed, or past the bound on the heads, breaks
// the connection, and says so.
func headError(lim *headLimit, err error) error {
	if lim.left == 0 {
		err = fmt.Errorf("net/http: server response headers exceeded %d bytes; aborted", lim.max)
	}
	return fmt.Errorf("net/http: HTTP/1.x transport connection broken: %w", err)
}

// maxHead is the transport's bound on the response heads.
func maxHead(t *http.Transport) int64 {
	if t.MaxResponseHeaderBytes > 0 {
		return t.MaxResponseHeaderBytes
	}
	return 10 << 20 // http.Transport's default
}

// headLimit reads conn, at most left bytes (of max) while the heads are
// read (left >= 0), without bound after (left < 0), so that an upstream
// cannot make fray hold an endless head. A failed read while waiting
// (connWait) is kept, to be returned again by the next read.
type headLimit struct {
	conn    net.Conn
	left    int64
	max     int64
	waiting bool
	kept    error
}

func (l *headLimit) Read(b []byte) (int, error) {
	if l.kept != nil {
		err := l.kept
		l.kept = nil
		return 0, err
	}
	if l.left < 0 {
		n, err := l.conn.Read(b)
		if err != nil && n == 0 && l.waiting {
			l.kept = err
		}
		return n, err
	}
	if l.left == 0 {
		return 0, errHeadTooLarge
	}
	if int64(len(b)) > l.left {
		b = b[:l.left]
	}
	n, err := l.conn.Read(b)
	l.left -= int64(n)
	return n, err
}

var errHeadTooLarge = errors.New("response head too large")

// connBody is the body of a response read from a connection of its own:
// closing it closes the connection. A read that fails because the request's
// context ended reports the context's cause, as http.Transport does, so that
// the pump tells a fault's close from an upstream that failed.
type connBody struct {
	body io.ReadCloser
	wait *connWait
	// left is what remains of a body of known length (-1: unknown);
	// ended, that a read failed or found the end.
	left   int64
	ended  bool
	conn   net.Conn
	ctx    context.Context
	stop   func() bool
	closed atomic.Bool
}

// connWait waits for a body's next bytes in the connection's own read
// buffer, br, which the body's reads then take them from, so that an idle
// stream's reader holds no buffer of its own while it waits (sse.Waiter).
type connWait struct {
	br  *bufio.Reader
	lim *headLimit
}

// WaitRead makes b an sse.Waiter: it returns once the connection has
// bytes for the body, or its read failed. A failure is left to the next
// Read, which reports it through the body's framing (a cut chunked body is
// io.ErrUnexpectedEOF, not the connection's io.EOF) and the request's
// context, as any failed read.
func (b *connBody) WaitRead() error {
	if b.closed.Load() {
		return http.ErrBodyReadAfterClose
	}
	// A body that has ended, or will with the bytes it has, needs nothing
	// more from the connection, which may stay open with nothing to come.
	w := b.wait
	if b.ended || b.left == 0 || w.br.Buffered() > 0 {
		return nil
	}
	// Peek reads into br's buffer, which the connection holds anyway; a
	// failed read is kept by headLimit, and bufio forgets it once Peek
	// has returned it.
	w.lim.waiting = true
	_, _ = w.br.Peek(1)
	w.lim.waiting = false
	return nil
}

func (b *connBody) Read(p []byte) (int, error) {
	if b.closed.Load() {
		return 0, http.ErrBodyReadAfterClose
	}
	n, err := b.body.Read(p)
	if b.left > 0 {
		b.left -= int64(n)
	}
	b.ended = b.ended || err != nil
	if err != nil && err != io.EOF {
		if cause := context.Cause(b.ctx); cause != nil {
			err = cause
		}
	}
	return n, err
}

func (b *connBody) Close() error {
	if b.closed.Swap(true) {
		return nil
	}
	b.stop()
	return b.conn.Close()
}

// upstreamAddr is the host:port req goes to, the port defaulting to
// http's.
func upstreamAddr(req *http.Request) string {
	port := req.URL.Port()
	if port == "" {
		port = "80"
	}
	return net.JoinHostPort(req.URL.Hostname(), port)
}

// asciiHost reports whether host needs no IDNA conversion before it is
// dialled; one that does goes through the transport, which converts it.
func asciiHost(host string) bool {
	for i := 0; i < len(host); i++ {
		if host[i] >= 0x80 {
			return false
		}
	}
	return host != ""
}

// validHeader reports whether http.Transport would send h: field names are
// tokens, values hold no control character but tab. Request.Write checks
// neither, so a header the transport would refuse goes to it, to be refused
// in its words.
func validHeader(h http.Header) bool {
	for k, vv := range h {
		if k == "" {
			return false
		}
		for i := 0; i < len(k); i++ {
			if !isTokenByte(k[i]) {
				return false
			}
		}
		for _, v := range vv {
			for i := 0; i < len(v); i++ {
				if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
					return false
				}
			}
		}
	}
	return true
}

// isTokenByte reports whether c may appear in an RFC 9110 token.
func isTokenByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}
