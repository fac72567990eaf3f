package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestBadInvocationsExit2 checks that every bad invocation gets a clear
// message naming the thing and the value, and exit code 2.
func TestBadInvocationsExit2(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"proxy"}, "needs --upstream"},
		{[]string{"proxy", "--upstream", "ftp://h"}, `"ftp://h": scheme must be http or https`},
		{[]string{"proxy", "--upstream", "::bad"}, `upstream "::bad"`},
		{[]string{"proxy", "--upstream", "http://"}, `"http://": no host`},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--bogus"}, "-bogus"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--log-level", "loud"}, `--log-level "loud"`},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--log-format", "xml"}, `--log-format "xml"`},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--listen", "127.0.0.1:99999"}, `--listen "127.0.0.1:99999"`},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--tls-cert", "c.pem"}, "needs both --tls-cert and --tls-key"},
		{[]string{"proxy", "--upstream", "https://127.0.0.1:1", "--upstream-ca", "/nonexistent.pem"}, "/nonexistent.pem"},
		{[]string{"nosuch"}, `unknown command "nosuch"`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"fray"}, tc.args...), &stdout, &stderr)
			if code != exitUsage {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, exitUsage, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr does not name %q:\n%s", tc.want, stderr.String())
			}
		})
	}
}

// TestProxyCommandServes starts `fray proxy` as a user would, reads the one
// start line, sends a request through, and stops it.
func TestProxyCommandServes(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "pong "+r.URL.Path)
	}))
	defer up.Close()
	f := launch(t, context.Background(), "proxy", "--upstream", up.URL, "--listen", "127.0.0.1:0", "--allow-inconclusive")
	line, hint := f.line(), f.line()
	f.tail()
	// fray: proxying http://127.0.0.1:PORT -> UPSTREAM
	fields := strings.Fields(line)
	if len(fields) != 5 || fields[1] != "proxying" || fields[4] != up.URL {
		t.Fatalf("start line %q", line)
	}
	// The next line says which URL the client should use.
	if want := "fray: point clients at " + fields[2] + "/PATH for the server's " + up.URL + "/PATH"; !strings.HasPrefix(hint, want) {
		t.Errorf("second line %q, want it to begin %q", hint, want)
	}
	resp, err := http.Get(fields[2] + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "pong /mcp" {
		t.Fatalf("through fray: %q", body)
	}
	if code := f.stop(); code != 0 {
		t.Fatalf("exit %d after shutdown", code)
	}
}

func TestVersion(t *testing.T) {
	var out bytes.Buffer
	if code := run(context.Background(), []string{"fray", "version"}, &out, io.Discard); code != 0 || !strings.HasPrefix(out.String(), "fray ") {
		t.Fatalf("exit %d, %q", code, out.String())
	}
}
