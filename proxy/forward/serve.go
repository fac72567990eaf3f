package forward

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"
)

// UpstreamTLS returns the TLS settings for reaching an https upstream: the
// system roots, plus the PEM certificates in caFile when it is not "".
func UpstreamTLS(caFile string) (*tls.Config, error) {
	if caFile == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("upstream CA: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("upstream CA %s: no PEM certificate in the file", caFile)
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// ListenerTLS loads a certificate and key for serving clients over TLS.
// Both empty means plain HTTP (nil config); one without the other is an error.
func ListenerTLS(certFile, keyFile string) (*tls.Config, error) {
	if certFile == "" && keyFile == "" {
		return nil, nil
	}
	if certFile == "" || keyFile == "" {
		return nil, errors.New("TLS on the listener needs both --tls-cert and --tls-key")
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("listener TLS (cert %s, key %s): %w", certFile, keyFile, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// MaxHeaderBytes bounds the request head a client may send, request line
// and header fields together; a larger one is answered 431 Request Header
// Fields Too Large before any handler runs. 64 KiB holds any MCP request,
// bearer tokens included, and keeps what a connection may make fray buffer
// small.
const MaxHeaderBytes = 64 << 10

// headSlack is what net/http reads past http.Server.MaxHeaderBytes before
// it answers 431: the request line and the empty line are not counted, so
// it allows 4 KiB for them. The server is given MaxHeaderBytes less that,
// so that the whole head is bounded by MaxHeaderBytes to the byte.
const headSlack = 4 << 10

// headTimeout bounds the arrival of a request head, from the first byte
// read on a connection (the TLS handshake included): a client that
// trickles its head, however steadily, is cut off then. A variable only
// so that tests need not wait 30 s.
var headTimeout = 30 * time.Second

// Serve serves h on ln until ctx is done, then shuts down: new connections
// are refused, and exchanges in flight get grace to finish before their
// connections are closed. A nil tlsConfig serves plain HTTP; with one,
// clients that offer HTTP/2 in ALPN get it. Request heads are bounded by
// MaxHeaderBytes and must arrive within 30 s; idle connections are closed
// after 2 minutes.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, tlsConfig *tls.Config, grace time.Duration) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: headTimeout,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    MaxHeaderBytes - headSlack,
	}
	errc := make(chan error, 1)
	if tlsConfig != nil {
		// ServeTLS, not Serve on a TLS listener: it is what offers h2 in
		// ALPN, next to http/1.1.
		srv.TLSConfig = tlsConfig.Clone()
		go func() { errc <- srv.ServeTLS(ln, "", "") }()
	} else {
		go func() { errc <- srv.Serve(ln) }()
	}
	select {
	case err := <-errc:
		return fmt.Errorf("serving on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// admit counts an exchange in against Options.MaxExchanges. Past the limit
// it answers 503 with Retry-After and a one-line reason, and reports false:
// the exchange is not forwarded. Every admitted exchange leaves.
func (p *Proxy) admit(w http.ResponseWriter, r *http.Request) bool {
	limit := int64(p.opts.MaxExchanges)
	if limit <= 0 || p.inflight.Add(1) <= limit {
		return true
	}
	p.inflight.Add(-1)
	// A saturated proxy refuses many requests a second: say so at most
	// once every 10 s at warn level, every time at debug.
	level := slog.LevelDebug
	now := int64(p.since()) + 1 // 0 is "never"
	if last := p.fullWarned.Load(); (last == 0 || now-last >= int64(10*time.Second)) && p.fullWarned.CompareAndSwap(last, now) {
		level = slog.LevelWarn
	}
	p.log.Log(r.Context(), level, "too many exchanges in flight; refusing new ones with 503",
		"limit", limit, "method", r.Method, "path", r.URL.Path)
	w.Header().Set("Retry-After", "1")
	plainError(w, http.StatusServiceUnavailable,
		fmt.Sprintf("fray: %d exchanges in flight, the most it takes at once; retry later", limit))
	return false
}

// leave counts out an exchange that admit let in.
func (p *Proxy) leave() {
	if p.opts.MaxExchanges > 0 {
		p.inflight.Add(-1)
	}
}
