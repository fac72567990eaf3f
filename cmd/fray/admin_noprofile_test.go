package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestAdminWithoutProfile: --admin without --profile serves the API over
// an empty profile, so /metrics works and a profile can be put in later.
func TestAdminWithoutProfile(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	up := sseUpstream(t)
	rctx, stop := context.WithCancel(ctx)
	var stdout bytes.Buffer
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(rctx, []string{"fray", "proxy", "--upstream", up.URL, "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--quiet", "--allow-inconclusive"}, &stdout, pw)
		pw.Close()
	}()
	rd := bufio.NewReader(pr)
	var admin string
	for admin == "" {
		line, err := rd.ReadString('\n')
		if err != nil {
			stop()
			t.Fatalf("fray stopped before serving the admin API: %v (%q)", err, line)
		}
		if rest, ok := strings.CutPrefix(line, "fray: admin API on "); ok {
			admin = strings.Fields(rest)[0]
		}
	}
	go io.Copy(io.Discard, rd)
	for _, path := range []string{"/metrics", "/profile"} {
		resp, err := http.Get(admin + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d %s", path, resp.StatusCode, body)
		}
	}
	stop()
	if code := <-done; code != exitOK {
		t.Errorf("exit %d", code)
	}
}
