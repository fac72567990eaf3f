package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/report"
)

// TestNoMCPEndpointInconclusive: a client on a wrong path, every request
// answered 404 by the server, gives no pass: fray proxy and fray run say
// inconclusive (exit 4), naming the path they saw.
func TestNoMCPEndpointInconclusive(t *testing.T) {
	up := serve(t, http.NotFoundHandler())
	ctx := within(t, 20*time.Second)
	rep := filepath.Join(t.TempDir(), "r.json")
	base, stop := startFray(t, ctx, "proxy", "--upstream", up.URL, "--listen", "127.0.0.1:0", "--report", rep, "--quiet")
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/wrong",
		strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	code, stdout, stderr := stop()
	r := readReport(t, rep)
	if code != exitInconclusive || r.Verdict != report.VerdictInconclusive || !strings.Contains(r.Why, "no request reached an MCP endpoint") ||
		!strings.Contains(r.Why, "POST /wrong answered 404") {
		t.Errorf("fray proxy: exit %d, verdict %s (%s)\nstdout:\n%s\nstderr:\n%s", code, r.Verdict, r.Why, stdout, stderr)
	}

	client := helperClient(t, "FRAY_TEST_EXIT", "0")
	code, stdout, stderr, r = runReported(t, 30*time.Second, append([]string{"run", "--upstream", up.URL + "/wrong", "--"}, client...)...)
	if code != exitInconclusive || !strings.Contains(r.Why, "no request reached an MCP endpoint") || !strings.Contains(r.Why, " /wrong answered 404") {
		t.Errorf("fray run: exit %d, verdict %s (%s)\nstdout:\n%s\nstderr:\n%s", code, r.Verdict, r.Why, stdout, stderr)
	}
}
