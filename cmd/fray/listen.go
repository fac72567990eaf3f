package main

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/frayproxy/fray/proxy/admin"
)

// listenFunc listens on a TCP address; net.Listen's shape.
type listenFunc func(network, addr string) (net.Listener, error)

// listenBeside listens on the --listen address flag for a run against
// upstream. fray listens before it starts the run's server (--server);
// when flag asks for any free port, the one the system gives may be the
// port that server is about to bind. The server then could not start, and
// fray would forward to itself. So a free port that turns out to be the
// upstream's is traded for another: the first listener is held while the
// second is opened, so that the two differ, then closed. A port given
// explicitly is taken as it is. (An upstream already listening holds its
// port, which the system then never gives.)
func listenBeside(listen listenFunc, flag string, upstream *url.URL) (net.Listener, error) {
	addr := admin.Addr(flag)
	ln, err := listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if !anyPort(addr) || !samePort(ln.Addr(), upstream) {
		return ln, nil
	}
	other, err := listen("tcp", addr)
	if cerr := ln.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("closing the listener on the upstream's port %s: %w", ln.Addr(), cerr)
	}
	if err != nil {
		if other != nil {
			_ = other.Close()
		}
		return nil, err
	}
	return other, nil
}

// anyPort reports whether addr (host:port) asks for any free port.
func anyPort(addr string) bool {
	_, port, err := net.SplitHostPort(addr)
	return err == nil && (port == "0" || port == "")
}

// samePort reports whether a's port is upstream's explicit port.
func samePort(a net.Addr, upstream *url.URL) bool {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || upstream == nil {
		return false
	}
	p, err := strconv.Atoi(upstream.Port())
	return err == nil && p == tcp.Port
}

// listenIsUpstream reports whether listening on addr (host:port, as
// admin.Addr gives it) would take the upstream's own address: the same
// port on the same host, on any host of a wildcard address, or on two
// loopback names. fray would then forward to itself.
func listenIsUpstream(addr string, upstream *url.URL) bool {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || anyPort(addr) {
		return false
	}
	uhost, uport, err := net.SplitHostPort(upstreamAddr(upstream))
	if err != nil || port != uport {
		return false
	}
	wild := func(h string) bool { return h == "" || net.ParseIP(h) != nil && net.ParseIP(h).IsUnspecified() }
	loop := func(h string) bool {
		return strings.EqualFold(h, "localhost") || net.ParseIP(h) != nil && net.ParseIP(h).IsLoopback()
	}
	return strings.EqualFold(host, uhost) || wild(host) || wild(uhost) || loop(host) && loop(uhost)
}

// checkListen refuses a --listen flag that is the upstream's address.
func checkListen(flag string, upstream *url.URL) error {
	if listenIsUpstream(admin.Addr(flag), upstream) {
		return usagef("--listen %s is the upstream's own address (--upstream %s): fray would forward to itself; give fray another port, e.g. --listen 127.0.0.1:7070", flag, upstream)
	}
	return nil
}
