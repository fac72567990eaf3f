package admin_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/frayproxy/fray/proxy/admin"
)

// TestSameOriginHosts: the names a request may give in Host (and Origin),
// for each way the API may be bound.
func TestSameOriginHosts(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	for _, tc := range []struct {
		name, bound, flag, host, origin string
		want                            int
	}{
		{"loopback address", "127.0.0.1:7071", "7071", "127.0.0.1:7071", "", 200},
		{"localhost", "127.0.0.1:7071", "7071", "localhost:7071", "http://localhost:7071", 200},
		{"IPv6 loopback", "[::1]:7071", "[::1]:7071", "[::1]:7071", "http://[::1]:7071", 200},
		{"the name --admin gave", "127.0.0.1:7071", "fray.test:7071", "FRAY.test:7071", "http://fray.test:7071", 200},
		{"rebound name", "127.0.0.1:7071", "7071", "evil.example:7071", "", 421},
		{"no port", "127.0.0.1:7071", "7071", "127.0.0.1", "", 421},
		{"other port", "127.0.0.1:7071", "7071", "127.0.0.1:7072", "", 421},
		{"https origin", "127.0.0.1:7071", "7071", "127.0.0.1:7071", "https://127.0.0.1:7071", 403},
		{"origin of another port", "127.0.0.1:7071", "7071", "127.0.0.1:7071", "http://127.0.0.1:8080", 403},
		{"every interface, loopback", "0.0.0.0:7071", "0.0.0.0:7071", "127.0.0.1:7071", "", 200},
		{"every interface, rebound name", "0.0.0.0:7071", "0.0.0.0:7071", "evil.example:7071", "", 421},
		{"every interface, foreign address", "0.0.0.0:7071", "0.0.0.0:7071", "192.0.2.1:7071", "", 421},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, err := net.ResolveTCPAddr("tcp", tc.bound)
			if err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequest("GET", "/stats", nil)
			req.Host = tc.host
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			rec := httptest.NewRecorder()
			admin.SameOrigin(ok, addr, tc.flag).ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.want, rec.Body)
			}
		})
	}
}
