package proxy

import (
	"net/url"
	"testing"
)

// TestProxyOptions: fray proxy's command line becomes the engine's
// options as its flags say: the upstream's origin only, the metrics and a
// swappable profile with --admin, the flags' defaults for zero values.
func TestProxyOptions(t *testing.T) {
	up := &url.URL{Scheme: "http", Host: "127.0.0.1:3000", Path: "/mcp"}
	o := ProxyOptions(ProxyCommand{Upstream: up})
	if o.Upstream.String() != "http://127.0.0.1:3000" {
		t.Errorf("upstream %s, want the origin http://127.0.0.1:3000", o.Upstream)
	}
	if o.Metrics || o.Mutable {
		t.Errorf("without --admin: metrics %v, mutable %v; want neither", o.Metrics, o.Mutable)
	}
	if o.MaxBlock != DefaultProxyMaxBlock || o.RequestBodyTimeout >= 0 || o.Drain != ProxyDrain {
		t.Errorf("max block %d, request body timeout %v, drain %v; want %d, none, %v", o.MaxBlock, o.RequestBodyTimeout, o.Drain, DefaultProxyMaxBlock, ProxyDrain)
	}
	o = ProxyOptions(ProxyCommand{Upstream: up, Admin: true, MaxBlock: 4096, RequestBodyTimeout: 3})
	if !o.Metrics || !o.Mutable || o.MaxBlock != 4096 || o.RequestBodyTimeout != 3 {
		t.Errorf("with --admin --max-block 4096: %+v", o)
	}
	if _, err := New(o); err != nil {
		t.Fatal(err)
	}
}
