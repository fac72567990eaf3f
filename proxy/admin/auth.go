package admin

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
)

// ErrTokenRequired is returned by Listen for an address reachable beyond
// this machine when no token is given.
var ErrTokenRequired = errors.New("admin: an address beyond loopback needs a bearer token")

// MinTokenLen is the shortest bearer token Listen accepts.
const MinTokenLen = 16

// Addr turns the --admin value into a listen address: a bare port
// ("7071") or one with no host (":7071") binds loopback, 127.0.0.1; an
// address with a host is kept.
func Addr(flag string) string {
	if !strings.Contains(flag, ":") {
		flag = ":" + flag
	}
	if strings.HasPrefix(flag, ":") {
		return "127.0.0.1" + flag
	}
	return flag
}

// Check validates the admin API's address and token without binding
// anything, and returns the address to listen on, Addr(flag). An address
// that may be reached from beyond this machine (any but a loopback one) is
// refused with ErrTokenRequired when token is empty; a host name counts as
// loopback only when every address it resolves to is one. A token shorter
// than MinTokenLen is refused wherever the API listens.
func Check(ctx context.Context, flag, token string) (string, error) {
	if token != "" && len(token) < MinTokenLen {
		return "", fmt.Errorf("admin: the bearer token has %d characters; use at least %d", len(token), MinTokenLen)
	}
	addr := Addr(flag)
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("admin: address %q: %w", flag, err)
	}
	if token != "" {
		return addr, nil
	}
	loop, err := loopbackHost(ctx, host)
	if err != nil {
		return "", fmt.Errorf("admin: address %q: %w", flag, err)
	}
	if !loop {
		return "", fmt.Errorf("%w: %s may be reached from other machines", ErrTokenRequired, addr)
	}
	return addr, nil
}

// Listen checks flag and token as Check does, then opens the admin API's
// listener. Without a token, the address bound is checked again: it must
// be a loopback one.
func Listen(ctx context.Context, flag, token string) (net.Listener, error) {
	addr, err := Check(ctx, flag, token)
	if err != nil {
		return nil, err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("admin: %w", err)
	}
	if token == "" && !Loopback(ln.Addr()) {
		ln.Close()
		return nil, fmt.Errorf("%w: %s bound %s", ErrTokenRequired, addr, ln.Addr())
	}
	return ln, nil
}

// loopbackHost reports whether every address host stands for is a
// loopback one.
func loopbackHost(ctx context.Context, host string) (bool, error) {
	if ip := net.ParseIP(strings.Trim(host, "[]")); ip != nil {
		return ip.IsLoopback(), nil
	}
	if host == "" {
		return false, nil // every interface
	}
	ips, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return false, err
	}
	for _, ip := range ips {
		if !ip.IP.IsLoopback() {
			return false, nil
		}
	}
	return len(ips) > 0, nil
}

// Loopback reports whether a listener's address can be reached only from
// this machine.
func Loopback(a net.Addr) bool {
	tcp, ok := a.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// RequireToken returns h guarded by a bearer token: every request without
// `Authorization: Bearer <token>` is answered 401 and never reaches h. The
// token is compared in constant time. An empty token returns h as it is.
// The returned handler is safe for concurrent use if h is.
func RequireToken(h http.Handler, token string) http.Handler {
	if token == "" {
		return h
	}
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := bearer(r.Header.Get("Authorization"))
		// Hashes of equal length, so the comparison's time says nothing
		// of the token's length either.
		sum := sha256.Sum256([]byte(got))
		if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="fray admin"`)
			writeProblems(w, http.StatusUnauthorized,
				errors.New("the admin API needs the header Authorization: Bearer <token>, with the token fray was started with"))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// bearer returns the token of an Authorization value of the Bearer scheme
// (RFC 6750; the scheme name is case-insensitive).
func bearer(v string) (string, bool) {
	scheme, token, ok := strings.Cut(v, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}
