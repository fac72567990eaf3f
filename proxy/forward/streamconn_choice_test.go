package forward

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/frayproxy/fray/proxy/mcp"
)

// TestWhichRequestsHaveAConnectionOfTheirOwn: only the long-lived GET
// event streams to a plain-http upstream, reached without a proxy, leave
// the transport.
func TestWhichRequestsHaveAConnectionOfTheirOwn(t *testing.T) {
	own := &streamConns{t: NewTransport(nil)}
	own.t.Proxy = nil
	proxied := &streamConns{t: NewTransport(nil)}
	proxied.t.Proxy = http.ProxyURL(&url.URL{Scheme: "http", Host: "proxy.example:3128"})
	get := func(target string, mod ...func(*http.Request)) *http.Request {
		r, _ := http.NewRequest(http.MethodGet, target, nil)
		r.Body = http.NoBody
		for _, m := range mod {
			m(r)
		}
		return r
	}
	for _, tc := range []struct {
		name   string
		conns  *streamConns
		req    *http.Request
		stream mcp.StreamType
		want   bool
	}{
		{"standalone GET", own, get("http://up:3000/mcp"), mcp.StreamGet, true},
		{"resumed GET", own, get("http://up/mcp"), mcp.StreamResume, true},
		{"legacy SSE GET", own, get("http://up/sse"), mcp.StreamLegacy, true},
		{"a transport given", nil, get("http://up/mcp"), mcp.StreamGet, false},
		{"https", own, get("https://up/mcp"), mcp.StreamGet, false},
		{"through a proxy", proxied, get("http://up/mcp"), mcp.StreamGet, false},
		{"discovery GET", own, get("http://up/.well-known/x"), mcp.StreamOther, false},
		{"POST", own, get("http://up/mcp", func(r *http.Request) { r.Method = http.MethodPost }), mcp.StreamPost, false},
		{"GET with a body", own, get("http://up/mcp", func(r *http.Request) { r.Body = io.NopCloser(strings.NewReader("x")) }), mcp.StreamGet, false},
		{"a host to convert", own, get("http://bücher.example/mcp"), mcp.StreamGet, false},
		{"a header the transport refuses", own, get("http://up/mcp", func(r *http.Request) { r.Header["X-Bad"] = []string{"a\x00b"} }), mcp.StreamGet, false},
		{"a field name the transport refuses", own, get("http://up/mcp", func(r *http.Request) { r.Header["X Bad"] = []string{"v"} }), mcp.StreamGet, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.conns.useFor(tc.req, tc.stream); got != tc.want {
				t.Errorf("useFor = %v, want %v", got, tc.want)
			}
		})
	}
}
