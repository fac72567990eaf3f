package main

import "testing"

// TestClientHint: the URL fray tells clients to use is the upstream's
// with fray's address, the path kept.
func TestClientHint(t *testing.T) {
	for _, tc := range []struct{ upstream, want string }{
		{"http://127.0.0.1:3000", "point clients at http://127.0.0.1:7070/PATH for the server's http://127.0.0.1:3000/PATH (e.g. http://127.0.0.1:7070/mcp)"},
		{"http://127.0.0.1:3000/", "point clients at http://127.0.0.1:7070/PATH for the server's http://127.0.0.1:3000/PATH (e.g. http://127.0.0.1:7070/mcp)"},
		{"http://127.0.0.1:3000/mcp", "point clients at http://127.0.0.1:7070/mcp for the server's http://127.0.0.1:3000/mcp (every path goes to the same path on the server)"},
		{"http://127.0.0.1:3000/mcp?x=1", "point clients at http://127.0.0.1:7070/mcp?x=1 for the server's http://127.0.0.1:3000/mcp?x=1 (every path goes to the same path on the server)"},
	} {
		if got := clientHint("http://127.0.0.1:7070", tc.upstream); got != tc.want {
			t.Errorf("clientHint(%q) = %q, want %q", tc.upstream, got, tc.want)
		}
	}
}
