package mcp

import (
	"net/http"
	"testing"
)

func TestRequestRevision(t *testing.T) {
	for _, tc := range []struct{ header, meta, session, want string }{
		{"2026-07-28", "", "", "2026-07-28"},
		{"", "2026-07-28", "", "2026-07-28"},
		{"", "2026-07-28", "2025-11-25", "2026-07-28"},
		{"2025-11-25", "2026-07-28", "", "2025-11-25"},
		{"", "", "2025-11-25", "2025-11-25"},
		{"", "", "", ""},
	} {
		if got := RequestRevision(tc.header, tc.meta, tc.session); got != tc.want {
			t.Errorf("RequestRevision(%q, %q, %q) = %q, want %q", tc.header, tc.meta, tc.session, got, tc.want)
		}
	}
}

func TestStatelessEras(t *testing.T) {
	for _, tc := range []struct {
		rev                            string
		stateless, resumable, sessions bool
	}{
		{RevLegacy, false, false, false},
		{RevStreamable, false, true, true},
		{RevPolling, false, true, true},
		{RevStateless, true, false, false},
		{"2027-01-01", true, false, false},
		{"", false, false, true},
	} {
		if got := Stateless(tc.rev); got != tc.stateless {
			t.Errorf("Stateless(%q) = %v", tc.rev, got)
		}
		if got := Resumable(tc.rev); got != tc.resumable {
			t.Errorf("Resumable(%q) = %v", tc.rev, got)
		}
		if got := Sessions(tc.rev); got != tc.sessions {
			t.Errorf("Sessions(%q) = %v", tc.rev, got)
		}
	}
}

func TestRoutingMismatch(t *testing.T) {
	hdr := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	for _, tc := range []struct {
		name    string
		h       http.Header
		method  string
		body    string
		hasName bool
		bad     bool
	}{
		{"method only", hdr("Mcp-Method", "tools/list"), "tools/list", "", false, false},
		{"call with name", hdr("Mcp-Method", "tools/call", "Mcp-Name", "add"), "tools/call", "add", true, false},
		{"resource uri", hdr("Mcp-Method", "resources/read", "Mcp-Name", "file:///a"), "resources/read", "file:///a", true, false},
		{"base64 name", hdr("Mcp-Method", "tools/call", "Mcp-Name", "=?base64?SGVsbG8sIOS4lueVjA==?="), "tools/call", "Hello, 世界", true, false},
		{"no method header", hdr(), "tools/list", "", false, true},
		{"method differs", hdr("Mcp-Method", "tools/list"), "tools/call", "add", true, true},
		{"method case differs", hdr("Mcp-Method", "Tools/List"), "tools/list", "", false, true},
		{"no name header", hdr("Mcp-Method", "tools/call"), "tools/call", "add", true, true},
		{"name differs", hdr("Mcp-Method", "tools/call", "Mcp-Name", "sub"), "tools/call", "add", true, true},
		{"bad base64", hdr("Mcp-Method", "tools/call", "Mcp-Name", "=?base64?!!?="), "tools/call", "add", true, true},
		{"name on a method without one is ignored", hdr("Mcp-Method", "tools/list", "Mcp-Name", "x"), "tools/list", "", false, false},
	} {
		got := RoutingMismatch(tc.h, tc.method, tc.body, tc.hasName)
		if (got != "") != tc.bad {
			t.Errorf("%s: RoutingMismatch = %q, want mismatch %v", tc.name, got, tc.bad)
		}
	}
}
