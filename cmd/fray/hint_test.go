package main

import "testing"

// TestClientHint: the URL fray tells clients to use keeps the path they
// would use on the server, or is fray's root when the upstream URL is the
// endpoint itself.
func TestClientHint(t *testing.T) {
	for _, tc := range []struct{ upstream, want string }{
		{"http://127.0.0.1:3000", "point clients at http://127.0.0.1:7070/PATH for the server's http://127.0.0.1:3000/PATH (e.g. http://127.0.0.1:7070/mcp)"},
		{"http://127.0.0.1:3000/", "point clients at http://127.0.0.1:7070/PATH for the server's http://127.0.0.1:3000/PATH (e.g. http://127.0.0.1:7070/mcp)"},
		{"http://127.0.0.1:3000/mcp", "point clients at http://127.0.0.1:7070/ for the server's http://127.0.0.1:3000/mcp (fray's / is the upstream URL itself)"},
	} {
		if got := clientHint("http://127.0.0.1:7070", tc.upstream); got != tc.want {
			t.Errorf("clientHint(%q) = %q, want %q", tc.upstream, got, tc.want)
		}
	}
}
