package admin

import (
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
)

// SameOrigin returns h guarded against web pages: a page a browser shows
// may send requests to a loopback address (and, through DNS rebinding,
// read the answers), so the API answers only requests that no page of
// another site can make.
//
//   - The Host must name the API's own listener: a loopback name or
//     address, the address ln is bound to, or the host of flag (the
//     --admin value); with the port ln listens on. A rebound name
//     (evil.example resolving to 127.0.0.1) is refused with 421.
//   - An Origin, when sent, must be http:// and such a host and port;
//     Sec-Fetch-Site, when sent, must not say cross-site or same-site.
//     Either refused with 403.
//   - A request that changes state (any method but GET, HEAD and
//     OPTIONS) must carry Content-Type application/json or
//     application/toml, which a browser sends across origins only after
//     a CORS preflight, and the API never answers one. Refused with 415.
//
// Tools such as curl send no Origin and are unaffected. The returned
// handler is safe for concurrent use if h is.
func SameOrigin(h http.Handler, ln net.Addr, flag string) http.Handler {
	g := newOriginGuard(ln, flag)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if status, err := g.check(r); err != nil {
			writeProblems(w, status, err)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// originGuard is what SameOrigin decides with; it is read-only once made.
type originGuard struct {
	port  string
	hosts map[string]bool // lower-case host names and addresses, besides loopback
	any   bool            // ln is bound to every interface: any address literal of this machine may reach it
}

func newOriginGuard(ln net.Addr, flag string) *originGuard {
	g := &originGuard{hosts: map[string]bool{}}
	if host, port, err := net.SplitHostPort(ln.String()); err == nil {
		g.port = port
		g.hosts[strings.ToLower(host)] = true
		if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
			g.any = true
		}
	}
	if host, _, err := net.SplitHostPort(Addr(flag)); err == nil && host != "" {
		g.hosts[strings.ToLower(strings.Trim(host, "[]"))] = true
	}
	if name, err := os.Hostname(); err == nil && g.any {
		g.hosts[strings.ToLower(name)] = true
	}
	return g
}

// check returns the status and the reason to refuse r with, or nil.
func (g *originGuard) check(r *http.Request) (int, error) {
	if !g.ownHost(r.Host) {
		return http.StatusMisdirectedRequest, fmt.Errorf("admin: Host %q does not name the admin API's listener (port %s); refused, as a DNS-rebinding page would send it", r.Host, g.port)
	}
	if o := r.Header.Get("Origin"); o != "" && !g.ownOrigin(o) {
		return http.StatusForbidden, fmt.Errorf("admin: Origin %q is not the admin API's own; cross-site requests are refused", o)
	}
	if s := r.Header.Get("Sec-Fetch-Site"); s == "cross-site" || s == "same-site" {
		return http.StatusForbidden, fmt.Errorf("admin: Sec-Fetch-Site %q; cross-site requests are refused", s)
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return 0, nil
	}
	ct := r.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" && mt != "application/toml" {
		return http.StatusUnsupportedMediaType, fmt.Errorf("admin: %s %s needs Content-Type application/json or application/toml, got %q", r.Method, r.URL.Path, ct)
	}
	return 0, nil
}

// ownHost reports whether hostport (a Host value, or an origin's host)
// names the listener; a value without a port has port 80.
func (g *originGuard) ownHost(hostport string) bool {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, "80"
	}
	if port != g.port {
		return false
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	if host == "localhost" || g.hosts[host] {
		return true
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false
	}
	return ip.IsLoopback() || g.any && ownAddress(ip)
}

// ownOrigin reports whether an Origin value is the API's own.
func (g *originGuard) ownOrigin(o string) bool {
	u, err := url.Parse(o)
	if err != nil || u.Scheme != "http" || u.Host == "" || u.Path != "" {
		return false
	}
	return g.ownHost(u.Host)
}

// ownAddress reports whether ip is an address of one of this machine's
// interfaces.
func ownAddress(ip net.IP) bool {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}
