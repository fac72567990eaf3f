package admin_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/frayproxy/fray/proxy/admin"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/metrics"
	"github.com/frayproxy/fray/proxy/observe"
)

// TestMetricsRoute: once mounted, GET /metrics answers the metrics in the
// text format, and only with the bearer token when one is required.
func TestMetricsRoute(t *testing.T) {
	active := lossyResume(t)
	m := metrics.New(metrics.Options{})
	m.Observe(&observe.Observation{Kind: observe.KindRequest, Stream: mcp.StreamResume,
		Request: &observe.Request{Method: http.MethodGet, HasLastEventID: true}})
	h := admin.New(active)
	h.HandleMetrics(m.Handler())
	srv := httptest.NewServer(admin.RequireToken(h, "s3cret"))
	defer srv.Close()

	get := func(token string) (int, string) {
		req, err := http.NewRequest(http.MethodGet, srv.URL+"/metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(body)
	}
	if code, _ := get(""); code != http.StatusUnauthorized {
		t.Errorf("GET /metrics without the token: %d, want 401", code)
	}
	code, body := get("s3cret")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics with the token: %d, want 200: %s", code, body)
	}
	for _, want := range []string{"fray_resumptions_total 1\n", `fray_exchanges_total{stream="resume"} 1` + "\n"} {
		if !strings.Contains(body, want) {
			t.Errorf("GET /metrics lacks %q:\n%s", want, body)
		}
	}
}
