package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestAdminBeyondLoopbackNeedsToken: `fray proxy --admin` on an address
// other machines may reach refuses to start without a bearer token, with
// exit 2 and a message that says how to give one; nothing is bound.
func TestAdminBeyondLoopbackNeedsToken(t *testing.T) {
	t.Setenv("FRAY_ADMIN_TOKEN", "")
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", "192.0.2.10:7071"} {
		t.Run(addr, func(t *testing.T) {
			code, _, stderr := runFray(t, quick, "proxy", "--upstream", "http://127.0.0.1:1",
				"--listen", "127.0.0.1:0", "--profile", "lossy-resume", "--admin", addr)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d:\n%s", code, exitUsage, stderr)
			}
			for _, want := range []string{"--admin " + addr, "other machines", "--admin-token", "FRAY_ADMIN_TOKEN", "loopback"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("message does not say %q:\n%s", want, stderr)
				}
			}
			if strings.Contains(stderr, "admin API on") {
				t.Errorf("the admin API started:\n%s", stderr)
			}
		})
	}
	code, _, stderr := runFray(t, quick, "proxy", "--upstream", "http://127.0.0.1:1", "--listen", "127.0.0.1:0",
		"--profile", "lossy-resume", "--admin", "0", "--admin-token", "short")
	if code != exitUsage || !strings.Contains(stderr, "at least 16") {
		t.Fatalf("a 5-character token: exit %d:\n%s", code, stderr)
	}
}

// TestAdminTokenFromTheEnvironment: with FRAY_ADMIN_TOKEN set, the admin API
// answers 401 to a request without it and serves one that carries it.
func TestAdminTokenFromTheEnvironment(t *testing.T) {
	const token = "a-token-of-24-characters"
	t.Setenv("FRAY_ADMIN_TOKEN", token)
	line, base, f := startAdminProxy(t, "--allow-inconclusive")
	// fray: admin API on http://127.0.0.1:PORT (bearer token required)
	if fields := strings.Fields(line); len(fields) != 8 || fields[2] != "API" || !strings.Contains(line, "token required") {
		t.Fatalf("admin line %q", line)
	}
	for _, tc := range []struct {
		auth string
		want int
	}{{"", 401}, {"Bearer wrong-token-of-24-characters", 401}, {"Bearer " + token, 200}} {
		req, _ := http.NewRequest("GET", base+"/stats", nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("Authorization %q: %d, want %d", tc.auth, resp.StatusCode, tc.want)
		}
	}
	if code := f.stop(); code != 0 {
		t.Fatalf("exit %d after shutdown", code)
	}
}

// startAdminProxy runs `fray proxy --admin 0` with args added, and returns
// its first line, the admin API's base URL it names, and fray, which stops
// when the test ends.
func startAdminProxy(t *testing.T, args ...string) (line, base string, f *frayRun) {
	t.Helper()
	up := emptyUpstream(t)
	f = launch(t, context.Background(), append([]string{"proxy", "--upstream", up.URL, "--listen", "127.0.0.1:0",
		"--profile", "lossy-resume", "--admin", "0"}, args...)...)
	line = f.line()
	f.tail()
	fields := strings.Fields(line)
	if len(fields) < 5 || !strings.HasPrefix(fields[4], "http://127.0.0.1:") {
		t.Fatalf("admin line %q", line)
	}
	return line, fields[4], f
}

// TestAdminRefusesWebPages: with the default setup (loopback, no token),
// what a web page can send is refused and changes nothing: a Host that
// does not name the listener (DNS rebinding), an Origin of another site,
// and a state-changing request without a JSON or TOML type (a no-cors
// POST); curl-like requests with the right type still work.
func TestAdminRefusesWebPages(t *testing.T) {
	t.Setenv("FRAY_ADMIN_TOKEN", "")
	_, base, _ := startAdminProxy(t)
	port := base[strings.LastIndex(base, ":")+1:]
	for _, tc := range []struct {
		name, method, path, host, origin, ctype, body string
		want                                          int
	}{
		{"rebound name reads", "GET", "/profile", "evil.example:" + port, "", "", "", 421},
		{"rebound name writes", "PUT", "/profile", "evil.example:" + port, "http://evil.example:" + port, "application/toml", "name = \"evil\"\n", 421},
		{"rebound name, same-origin write", "PUT", "/profile", "evil.example:" + port, "", "application/toml", "name = \"evil\"\n", 421},
		{"other port", "GET", "/stats", "127.0.0.1:1", "", "", "", 421},
		{"cross-site read", "GET", "/profile", "", "http://evil.example", "", "", 403},
		{"cross-site no-cors POST", "POST", "/faults/0/disable", "", "http://evil.example", "text/plain", "", 403},
		{"null origin", "POST", "/faults/0/disable", "", "null", "application/json", "", 403},
		{"fetch metadata", "POST", "/faults/0/disable", "", "", "application/json", "", 403},
		{"form type", "POST", "/faults/0/disable", "", "", "application/x-www-form-urlencoded", "", 415},
		{"no type", "POST", "/faults/0/disable", "", "", "", "", 415},
		{"TOML as form", "PUT", "/profile", "", "", "application/x-www-form-urlencoded", "name = \"evil\"\n", 415},
		{"curl read", "GET", "/stats", "", "", "", "", 200},
		{"localhost read", "GET", "/stats", "localhost:" + port, "", "", "", 200},
		{"own origin", "GET", "/profile", "", base, "", "", 200},
		{"disable as JSON", "POST", "/faults/0/disable", "", "", "application/json", "", 200},
		{"enable as JSON", "POST", "/faults/0/enable", "", base, "application/json; charset=utf-8", "", 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, base+tc.path, strings.NewReader(tc.body))
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			if tc.ctype != "" {
				req.Header.Set("Content-Type", tc.ctype)
			}
			if tc.name == "fetch metadata" {
				req.Header.Set("Sec-Fetch-Site", "cross-site")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.want, body)
			}
		})
	}
	if _, body := get(t, base+"/profile"); !strings.Contains(body, `"name": "lossy-resume"`) || !strings.Contains(body, `"enabled": true`) {
		t.Errorf("a refused request changed the profile: %s", body)
	}
}

// TestAdminWithoutProfile: --admin without --profile serves the API over
// an empty profile, so /metrics works and a profile can be put in later.
func TestAdminWithoutProfile(t *testing.T) {
	ctx := within(t, 20*time.Second)
	up := sseUpstream(t)
	f := launch(t, ctx, "proxy", "--upstream", up.URL, "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--quiet", "--allow-inconclusive")
	var admin string
	for admin == "" {
		if rest, ok := strings.CutPrefix(f.line(), "fray: admin API on "); ok {
			admin = strings.Fields(rest)[0]
		}
	}
	f.tail()
	for _, path := range []string{"/metrics", "/profile"} {
		if code, body := get(t, admin+path); code != http.StatusOK {
			t.Errorf("GET %s: %d %s", path, code, body)
		}
	}
	if code := f.stop(); code != exitOK {
		t.Errorf("exit %d", code)
	}
}
