package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestListenBesideTradesTheUpstreamsPort: when the free port fray is given
// is the port of the upstream its --server is about to bind, fray listens
// on another and lets that one go, so that the server can bind it; a port
// given with --listen, or a free port that is not the upstream's, is kept.
func TestListenBesideTradesTheUpstreamsPort(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := taken.Addr().(*net.TCPAddr).Port
	upstream := &url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", port), Path: "/mcp"}
	// The system's first pick is the upstream's port; later ones are its own.
	picks := 0
	listen := func(network, addr string) (net.Listener, error) {
		if picks++; picks == 1 {
			return taken, nil
		}
		return net.Listen(network, addr)
	}
	ln, err := listenBeside(listen, "127.0.0.1:0", upstream)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if got := ln.Addr().(*net.TCPAddr).Port; got == port || picks != 2 {
		t.Fatalf("listening on port %d after %d listens; want a port other than the upstream's %d", got, picks, port)
	}
	// The upstream's port is free again, for the server to bind.
	srv, err := net.Listen("tcp", upstream.Host)
	if err != nil {
		t.Fatalf("the upstream's port was not let go: %v", err)
	}
	srv.Close()

	t.Run("a port given explicitly is kept", func(t *testing.T) {
		first, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer first.Close()
		own := first.Addr().(*net.TCPAddr).Port
		n := 0
		got, err := listenBeside(func(string, string) (net.Listener, error) { n++; return first, nil },
			fmt.Sprintf("127.0.0.1:%d", own), &url.URL{Host: fmt.Sprintf("127.0.0.1:%d", own)})
		if err != nil || got != first || n != 1 {
			t.Errorf("listener %v, %d listens, error %v; want the one asked for, once", got, n, err)
		}
	})
	t.Run("another free port is kept", func(t *testing.T) {
		n := 0
		got, err := listenBeside(func(network, addr string) (net.Listener, error) { n++; return net.Listen(network, addr) },
			"127.0.0.1:0", &url.URL{Host: "127.0.0.1:1"})
		if err != nil {
			t.Fatal(err)
		}
		got.Close()
		if n != 1 {
			t.Errorf("%d listens; want 1", n)
		}
	})
	t.Run("a failed second listen closes the first", func(t *testing.T) {
		first, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := first.Addr().(*net.TCPAddr).Port
		broke := errors.New("no more ports")
		n := 0
		_, err = listenBeside(func(string, string) (net.Listener, error) {
			if n++; n == 1 {
				return first, nil
			}
			return nil, broke
		}, ":0", &url.URL{Host: fmt.Sprintf("localhost:%d", p)})
		if !errors.Is(err, broke) {
			t.Fatalf("error %v; want %v", err, broke)
		}
		if again, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p)); err != nil {
			t.Errorf("the first listener was kept open: %v", err)
		} else {
			again.Close()
		}
	})
}

// TestListenIsUpstream: --listen that takes the upstream's own address
// is told apart from one beside it.
func TestListenIsUpstream(t *testing.T) {
	for _, tc := range []struct {
		addr, upstream string
		want           bool
	}{
		{"127.0.0.1:3000", "http://127.0.0.1:3000/mcp", true},
		{"127.0.0.1:3000", "http://localhost:3000", true},
		{"0.0.0.0:3000", "http://127.0.0.1:3000", true},
		{"127.0.0.1:3000", "http://0.0.0.0:3000", true},
		{"[::1]:80", "http://127.0.0.1", true},
		{"127.0.0.1:7070", "http://127.0.0.1:3000", false},
		{"127.0.0.1:0", "http://127.0.0.1:3000", false},
		{"10.0.0.5:3000", "http://127.0.0.1:3000", false},
		{"127.0.0.1:443", "https://127.0.0.1", true},
	} {
		u, err := url.Parse(tc.upstream)
		if err != nil {
			t.Fatal(err)
		}
		if got := listenIsUpstream(tc.addr, u); got != tc.want {
			t.Errorf("listenIsUpstream(%q, %q) = %v, want %v", tc.addr, tc.upstream, got, tc.want)
		}
	}
}

// TestListenOnUpstreamRefused: fray proxy and fray run refuse --listen on
// the upstream's address before anything starts, saying what to do.
func TestListenOnUpstreamRefused(t *testing.T) {
	port := freePort(t)
	up := fmt.Sprintf("http://127.0.0.1:%d", port)
	for _, args := range [][]string{
		{"proxy", "--upstream", up, "--listen", fmt.Sprintf("127.0.0.1:%d", port)},
		{"proxy", "--upstream", up + "/mcp", "--listen", strconv.Itoa(port)},
		{"run", "--upstream", up + "/mcp", "--listen", fmt.Sprintf("localhost:%d", port), "--", "true"},
	} {
		code, _, stderr := runFray(t, quick, args...)
		if code != exitUsage || !strings.Contains(stderr, "is the upstream's own address") || !strings.Contains(stderr, "--listen 127.0.0.1:7070") {
			t.Errorf("%v: exit %d, stderr %q; want %d refusing it", args, code, stderr, exitUsage)
		}
	}
}

// TestListenAddressForms: --listen takes what --admin takes, and a bare
// port or :port binds loopback, as --admin's do.
func TestListenAddressForms(t *testing.T) {
	for _, listen := range []string{"0", ":0", "127.0.0.1:0"} {
		t.Run(listen, func(t *testing.T) {
			ctx := within(t, 20*time.Second)
			up := sseUpstream(t)
			base, stop := startFray(t, ctx, "proxy", "--upstream", up.URL, "--listen", listen, "--quiet", "--allow-inconclusive")
			defer stop()
			host, _, err := net.SplitHostPort(strings.TrimPrefix(base, "http://"))
			if err != nil || host != "127.0.0.1" {
				t.Fatalf("--listen %s bound %s, want loopback (%v)", listen, base, err)
			}
		})
	}
}
