// Package forward is fray's HTTP reverse proxy: it forwards every exchange to
// one upstream, passes text/event-stream bodies through the SSE reader one
// event block at a time, classifies each exchange for faults and checks, and
// carries out the decisions of a fault plan.
//
//	client <-> Proxy.ServeHTTP (classify, exchange faults)
//	               |
//	               +-> upstream request --> response
//	                                          |
//	                       text/event-stream: pump (source -> decider -> sink -> recorder, pump.go)
//	                       anything else:     streamed through
package forward

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/sse"
)

// Options configures a Proxy. The zero value of every field but Upstream is
// usable.
type Options struct {
	// Upstream is the base URL every request is forwarded under: a client
	// path P goes to Upstream.Path joined with P. Required; http or https.
	Upstream *url.URL
	// Transport carries requests to the upstream. Nil means fray's own:
	// NewTransport(UpstreamTLS), and, for each long-lived GET event
	// stream to a plain-http upstream, a connection of its own that holds
	// no goroutine while the stream waits (streamconn.go). A Transport
	// given carries every request.
	Transport http.RoundTripper
	// UpstreamTLS is the TLS configuration of fray's own transport, for
	// an https upstream; nil means the system roots. Unused when
	// Transport is set.
	UpstreamTLS *tls.Config
	// Logger receives the proxy's log lines. Nil discards them.
	Logger *slog.Logger
	// MaxBlock bounds an SSE event block in bytes; 0 means sse.DefaultMaxBlock.
	MaxBlock int
	// MaxRequestBody bounds the JSON-RPC request bodies the proxy reads to
	// classify; a larger body is answered 413. 0 means 16 MiB.
	MaxRequestBody int64
	// MaxSessions bounds the sessions tracked at once; the oldest is
	// forgotten past it. 0 means 65536.
	MaxSessions int
	// Faults decides which faults hit which traffic. Nil injects none.
	// To change the faults at run time, change them inside the Plan (as
	// profiles.Active does): the Proxy reads this field once per exchange.
	Faults faults.Plan
	// LogFaults logs every fault decision at info level.
	LogFaults bool
	// Clock gives the time and timers. Nil means the real clock.
	Clock Clock
	// Observer receives an observation of every request, response, SSE
	// event and end of exchange. Nil observes nothing and costs nothing.
	// An event stream reports through the Observer's observe.Stream
	// (observe.NewStream): a Queue's takes its events a burst at a time
	// and, where no fault reads them, parses them off the stream's path.
	Observer observe.Observer
	// MaxExchanges bounds the exchanges in flight at once, open event
	// streams included; past it a new exchange is answered 503 with
	// Retry-After, and never forwarded. 0 means no bound.
	MaxExchanges int
	// ResponseHeaderTimeout bounds the wait for the upstream's response
	// head once the request is sent; past it the upstream request is
	// cancelled and the client gets 504. 0 means no bound, because a JSON
	// answer to a long tools/call comes only once the call is done.
	ResponseHeaderTimeout time.Duration
	// RequestBodyTimeout bounds how long a request body fray reads (a
	// POST's, to classify it) may take to arrive whole, from the moment
	// its head was read; past it the client gets 408, its connection is
	// closed, and nothing is forwarded. A body being read holds no
	// MaxExchanges slot. 0 means DefaultRequestBodyTimeout; negative, no
	// bound.
	RequestBodyTimeout time.Duration
}

// DefaultRequestBodyTimeout is the RequestBodyTimeout of a zero Options:
// an MCP request body is a few kilobytes, and a client that cannot send
// one in 10 s is stalled or hostile.
const DefaultRequestBodyTimeout = 10 * time.Second

// Proxy is an http.Handler that forwards to Options.Upstream. It is safe for
// concurrent use.
type Proxy struct {
	opts     Options
	upstream *url.URL
	log      *slog.Logger
	clock    Clock
	start    time.Time
	sessions *sessions
	legacy   legacyPaths
	exchSeq  atomic.Uint64
	readers  sync.Pool // of *sse.Reader
	holds    holds     // streams held by a fault (hold.go)
	// conns: the event streams' own connections, when the transport is
	// fray's (streamconn.go); nil otherwise.
	conns *streamConns

	// via is the name this proxy gives itself in Via headers, unique to
	// it, so that a request that comes back to it is known (a loop).
	via string

	inflight   atomic.Int64 // exchanges admitted and not yet done, when MaxExchanges > 0
	fullWarned atomic.Int64 // when the limit was last warned about: ns since start, plus 1; 0 for never

	doubledWarned atomic.Bool // a client path that repeats the base path was warned about (upstreamnote.go)
	errorNoted    atomic.Bool // the upstream's first 4xx or 5xx was logged (upstreamnote.go)
}

// New checks opts and returns a Proxy.
func New(opts Options) (*Proxy, error) {
	if opts.Upstream == nil {
		return nil, errors.New("proxy: no upstream URL")
	}
	u, err := checkUpstream(opts.Upstream, opts.Upstream.String())
	if err != nil {
		return nil, err
	}
	var conns *streamConns
	if opts.Transport == nil {
		t := NewTransport(opts.UpstreamTLS)
		opts.Transport, conns = t, &streamConns{t: t}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MaxRequestBody <= 0 {
		opts.MaxRequestBody = 16 << 20
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = 1 << 16
	}
	if opts.RequestBodyTimeout == 0 {
		opts.RequestBodyTimeout = DefaultRequestBodyTimeout
	}
	if opts.Clock == nil {
		opts.Clock = realClock{}
	}
	p := &Proxy{
		opts:     opts,
		upstream: u,
		log:      opts.Logger,
		clock:    opts.Clock,
		start:    opts.Clock.Now(),
		sessions: newSessions(opts.MaxSessions),
		conns:    conns,
	}
	p.readers.New = func() any { return sse.NewReader(nil, opts.MaxBlock) }
	var id [4]byte
	_, _ = rand.Read(id[:])
	p.via = "fray-" + hex.EncodeToString(id[:])
	return p, nil
}

// ParseUpstream parses a user-given upstream URL and checks that fray can
// forward to it: an absolute http or https URL with a host. A URL written
// without its scheme ("127.0.0.1:3000/mcp", "localhost:3000") is an error
// that gives the URL with http:// as the likely meaning.
func ParseUpstream(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" {
		if hint := withScheme(raw); hint != "" {
			return nil, fmt.Errorf("upstream %q: no http:// or https:// scheme (did you mean %q?)", raw, hint)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("upstream %q: %w", raw, err)
	}
	return checkUpstream(u, raw)
}

// withScheme returns raw with http:// in front when that makes it a URL
// with a host and a port, "" otherwise.
func withScheme(raw string) string {
	if strings.Contains(raw, "://") {
		return ""
	}
	u, err := url.Parse("http://" + raw)
	if err != nil || u.Hostname() == "" || u.Port() == "" {
		return ""
	}
	return u.String()
}

// checkUpstream validates u; name is how the user wrote it, for errors.
func checkUpstream(u *url.URL, name string) (*url.URL, error) {
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("upstream %q: scheme must be http or https", name)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("upstream %q: no host", name)
	}
	if u.User != nil || u.Fragment != "" {
		return nil, fmt.Errorf("upstream %q: must not carry user info or a fragment", u.Redacted())
	}
	c := *u
	c.Path = strings.TrimSuffix(c.Path, "/")
	c.RawPath = ""
	return &c, nil
}

// Upstream returns the base URL the proxy forwards to.
func (p *Proxy) Upstream() *url.URL { c := *p.upstream; return &c }

// UpstreamStreamWindow is the HTTP/2 flow-control window fray gives each
// stream of an h2 upstream: the most of a stream it buffers for a client
// that reads slowly or not at all.
const UpstreamStreamWindow = 64 << 10

// The buffers of each HTTP/1.1 connection to the upstream, held as long as
// the connection: for the life of an event stream, idle or not. They are
// smaller than the transport's default, 4 KiB each, for the memory budget
// of idle streams (docs/performance.md). A request head and body larger
// than the write buffer go out in more than one write; a read of more than
// the read buffer (a JSON body, a large event) goes straight to fray's own
// buffer; only a burst of small SSE chunks takes more reads, one per
// kilobyte instead of four.
const (
	upstreamReadBuffer  = 1 << 10
	upstreamWriteBuffer = 1 << 10
)

// NewTransport returns the transport fray uses to reach an upstream: the
// settings of http.DefaultTransport, no transparent decompression (bytes
// pass as sent), more idle connections per host (a proxy talks to one
// host), HTTP/2 with https upstreams that offer it, and tlsConfig for
// https upstreams (nil means the system roots).
func NewTransport(tlsConfig *tls.Config) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DisableCompression = true
	t.MaxIdleConnsPerHost = 256
	t.MaxIdleConns = 1024
	t.TLSClientConfig = tlsConfig
	// A custom TLS config or dialer turns HTTP/2 off unless asked for: an
	// https upstream that offers h2 gets it, as a direct client would.
	t.ForceAttemptHTTP2 = true
	// HTTP/2 flow control is fray's back-pressure on an h2 upstream: the
	// transport buffers up to the stream's window of what the client has
	// not taken yet. Its default window, 4 MiB, let a client that never
	// reads make fray hold 4 MiB; 64 KiB is what HTTP/1.1 costs.
	// The connection's window stays large, so that streams whose clients
	// stopped reading do not hold back the others on the connection.
	t.HTTP2 = &http.HTTP2Config{MaxReceiveBufferPerStream: UpstreamStreamWindow}
	t.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	t.ReadBufferSize, t.WriteBufferSize = upstreamReadBuffer, upstreamWriteBuffer
	t.MaxResponseHeaderBytes = MaxResponseHead
	return t
}

// MaxResponseHead bounds the bytes of an upstream's response heads, as
// fray bounds a client's request head: a stream's head stays in memory for
// as long as the stream is open, and net/http's default, 10 MiB, let an
// upstream make fray hold that much per stream. Past it the client gets
// 502, saying so.
const MaxResponseHead = 64 << 10
