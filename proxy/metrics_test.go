package proxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/frayproxy/fray/profiles"
)

// TestMetricsOnAdmin: with the metrics added, the admin API's /metrics
// counts the traffic through the engine's proxy and reports, per check,
// the findings of the engine's own verifier.
func TestMetricsOnAdmin(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: 7\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n")
	}))
	defer up.Close()
	prof, err := profiles.Builtin("lossy-resume")
	if err != nil {
		t.Fatal(err)
	}
	eng := newEngine(t, up.URL, Options{Profile: prof, Metrics: true})
	fray := httptest.NewServer(eng.Handler())
	defer fray.Close()
	adminSrv := httptest.NewServer(eng.AdminHandler())
	defer adminSrv.Close()

	for _, lastEventID := range []string{"", "3"} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fray.URL+"/mcp", nil)
		if lastEventID != "" {
			req.Header.Set("Last-Event-ID", lastEventID)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}

	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, adminSrv.URL+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, name := range []string{"fray_exchanges_total", "fray_resumptions_total", "fray_events_total", "fray_findings_total"} {
		for _, m := range fams[name].GetMetric() {
			key := name
			for _, l := range m.GetLabel() {
				key += "," + l.GetValue()
			}
			got[key] = m.GetCounter().GetValue()
		}
	}
	for key, want := range map[string]float64{
		"fray_exchanges_total,get": 1, "fray_exchanges_total,resume": 1, "fray_resumptions_total": 1,
		"fray_events_total,from_upstream": 2, "fray_events_total,to_client": 2,
	} {
		if got[key] != want {
			t.Errorf("%s = %v, want %v", key, got[key], want)
		}
	}
	checks := eng.Report().Checks
	if len(checks) == 0 {
		t.Fatal("the verifier reports no checks")
	}
	for _, c := range checks {
		if v, ok := got["fray_findings_total,"+c.ID]; !ok || v != float64(c.Count) {
			t.Errorf("fray_findings_total{check=%q} = %v (present %v), the verifier says %d", c.ID, v, ok, c.Count)
		}
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Errorf("Content-Type %q, want the text format", resp.Header.Get("Content-Type"))
	}
}
