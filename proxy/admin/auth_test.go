package admin_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/admin"
)

const token = "0123456789abcdef-secret"

func TestAddrBindsLoopbackByDefault(t *testing.T) {
	for flag, want := range map[string]string{
		"7071":           "127.0.0.1:7071",
		":7071":          "127.0.0.1:7071",
		"127.0.0.1:7071": "127.0.0.1:7071",
		"[::1]:7071":     "[::1]:7071",
		"0.0.0.0:7071":   "0.0.0.0:7071",
		"localhost:7071": "localhost:7071",
	} {
		if got := admin.Addr(flag); got != want {
			t.Errorf("Addr(%q) = %q, want %q", flag, got, want)
		}
	}
}

// TestBeyondLoopbackNeedsToken: an address other machines may reach is
// refused without a token, before anything is bound, and accepted with
// one; loopback addresses need none.
func TestBeyondLoopbackNeedsToken(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tc := range []struct {
		flag, token string
		refused     bool
	}{
		{"7071", "", false},
		{":7071", "", false},
		{"127.0.0.1:7071", "", false},
		{"127.9.9.9:7071", "", false},
		{"[::1]:7071", "", false},
		{"localhost:7071", "", false},
		{"0.0.0.0:7071", "", true},
		{"[::]:7071", "", true},
		{"192.0.2.10:7071", "", true},
		{"[2001:db8::1]:7071", "", true},
		{"0.0.0.0:7071", token, false},
		{"192.0.2.10:7071", token, false},
	} {
		addr, err := admin.Check(ctx, tc.flag, tc.token)
		switch {
		case tc.refused && !errors.Is(err, admin.ErrTokenRequired):
			t.Errorf("Check(%q, token %q) = %q, %v; want ErrTokenRequired", tc.flag, tc.token, addr, err)
		case tc.refused && !strings.Contains(err.Error(), "other machines"):
			t.Errorf("Check(%q): %v does not say why", tc.flag, err)
		case !tc.refused && err != nil:
			t.Errorf("Check(%q, token %q): %v", tc.flag, tc.token, err)
		}
	}
	if _, err := admin.Check(ctx, "127.0.0.1:7071", "short"); err == nil || !strings.Contains(err.Error(), "at least 16") {
		t.Errorf("a 5-character token: %v", err)
	}
}

func TestListenBindsLoopback(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ln, err := admin.Listen(ctx, "0", "")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if !admin.Loopback(ln.Addr()) || !strings.HasPrefix(ln.Addr().String(), "127.0.0.1:") {
		t.Fatalf("a bare port bound %s", ln.Addr())
	}
	if _, err := admin.Listen(ctx, "0.0.0.0:0", ""); !errors.Is(err, admin.ErrTokenRequired) {
		t.Fatalf("0.0.0.0 without a token: %v", err)
	}
}

// TestRequireToken: with a token set, every request without the right
// bearer token gets 401 and never reaches the API, whatever its path.
func TestRequireToken(t *testing.T) {
	_, active := newServer(t)
	srv := httptest.NewServer(admin.RequireToken(admin.New(active), token))
	defer srv.Close()
	for _, tc := range []struct {
		name, method, path, auth string
		want                     int
	}{
		{"no header", "GET", "/profile", "", 401},
		{"wrong token", "GET", "/profile", "Bearer " + strings.Repeat("x", len(token)), 401},
		{"token prefix", "GET", "/profile", "Bearer " + token[:len(token)-1], 401},
		{"token and more", "GET", "/profile", "Bearer " + token + "x", 401},
		{"basic scheme", "GET", "/profile", "Basic " + token, 401},
		{"bare token", "GET", "/profile", token, 401},
		{"empty bearer", "GET", "/profile", "Bearer ", 401},
		{"disable without", "POST", "/faults/0/disable", "", 401},
		{"put without", "PUT", "/profile", "", 401},
		{"unknown path without", "GET", "/nosuch", "", 401},
		{"right token", "GET", "/profile", "Bearer " + token, 200},
		{"scheme in lower case", "GET", "/stats", "bearer " + token, 200},
		{"unknown path with", "GET", "/nosuch", "Bearer " + token, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader("name = \"x\"\n"))
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
			if tc.want == 401 && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without a Bearer challenge: %v", resp.Header)
			}
		})
	}
	if !active.Stats()[0].Enabled || active.Profile().Name != "lossy-resume" {
		t.Fatal("a request without the token changed the active profile")
	}
}

func TestRequireTokenEmptyIsOpen(t *testing.T) {
	_, active := newServer(t)
	h := admin.New(active)
	if got := admin.RequireToken(h, ""); got != http.Handler(h) {
		t.Fatal("an empty token wrapped the handler")
	}
}
