package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
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
			var stderr bytes.Buffer
			code := run(context.Background(), []string{"fray", "proxy", "--upstream", "http://127.0.0.1:1",
				"--listen", "127.0.0.1:0", "--profile", "lossy-resume", "--admin", addr}, io.Discard, &stderr)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d:\n%s", code, exitUsage, stderr.String())
			}
			for _, want := range []string{"--admin " + addr, "other machines", "--admin-token", "FRAY_ADMIN_TOKEN", "loopback"} {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("message does not say %q:\n%s", want, stderr.String())
				}
			}
			if strings.Contains(stderr.String(), "admin API on") {
				t.Errorf("the admin API started:\n%s", stderr.String())
			}
		})
	}
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"fray", "proxy", "--upstream", "http://127.0.0.1:1", "--listen", "127.0.0.1:0",
		"--profile", "lossy-resume", "--admin", "0", "--admin-token", "short"}, io.Discard, &stderr)
	if code != exitUsage || !strings.Contains(stderr.String(), "at least 16") {
		t.Fatalf("a 5-character token: exit %d:\n%s", code, stderr.String())
	}
}

// TestAdminTokenFromTheEnvironment: with FRAY_ADMIN_TOKEN set, the admin API
// answers 401 to a request without it and serves one that carries it.
func TestAdminTokenFromTheEnvironment(t *testing.T) {
	const token = "a-token-of-24-characters"
	t.Setenv("FRAY_ADMIN_TOKEN", token)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer up.Close()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"fray", "proxy", "--upstream", up.URL, "--listen", "127.0.0.1:0",
			"--profile", "lossy-resume", "--admin", "0", "--allow-inconclusive"}, io.Discard, pw)
		pw.Close()
	}()
	br := bufio.NewReader(pr)
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, br) }()
	// fray: admin API on http://127.0.0.1:PORT (bearer token required)
	fields := strings.Fields(line)
	if len(fields) != 8 || fields[2] != "API" || !strings.HasPrefix(fields[4], "http://127.0.0.1:") || !strings.Contains(line, "token required") {
		t.Fatalf("admin line %q", line)
	}
	for _, tc := range []struct {
		auth string
		want int
	}{{"", 401}, {"Bearer wrong-token-of-24-characters", 401}, {"Bearer " + token, 200}} {
		req, _ := http.NewRequest("GET", fields[4]+"/stats", nil)
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
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d after shutdown", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("fray proxy did not stop")
	}
}
