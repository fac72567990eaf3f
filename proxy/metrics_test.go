package proxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy/mcp"
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
	eng, fray, adminSrv := metricsEngine(t, up)

	for _, lastEventID := range []string{"", "3"} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fray.URL+"/mcp", nil)
		if lastEventID != "" {
			req.Header.Set("Last-Event-ID", lastEventID)
		}
		resp := do(t, http.DefaultClient, req)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}

	fams, contentType := scrape(t, ctx, adminSrv.URL)
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
	if !strings.HasPrefix(contentType, "text/plain") {
		t.Errorf("Content-Type %q, want the text format", contentType)
	}
}

// metricsEngine is an engine with its metrics under lossy-resume in front
// of up, served with its admin API until the test ends.
func metricsEngine(t *testing.T, up *httptest.Server) (eng *Engine, fray, admin *httptest.Server) {
	t.Helper()
	prof, err := profiles.Builtin("lossy-resume")
	if err != nil {
		t.Fatal(err)
	}
	eng = newEngine(t, up.URL, Options{Profile: prof, Metrics: true})
	fray = httptest.NewServer(eng.Handler())
	t.Cleanup(fray.Close)
	admin = httptest.NewServer(eng.AdminHandler())
	t.Cleanup(admin.Close)
	return eng, fray, admin
}

// scrape reads the admin API's /metrics at adminURL in the text format,
// and returns it and its Content-Type.
func scrape(t *testing.T, ctx context.Context, adminURL string) (map[string]*dto.MetricFamily, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, adminURL+"/metrics", nil)
	resp := do(t, http.DefaultClient, req)
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams, resp.Header.Get("Content-Type")
}

// TestQuietStandaloneStreamCounted: a session's standalone GET stream is
// counted in fray_open_streams from its response on, before any event
// (servers of 2025-06-18 and older send none until they have something to
// say), and no longer once its client has gone.
func TestQuietStandaloneStreamCounted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer up.Close()
	defer up.CloseClientConnections()
	_, fray, adminSrv := metricsEngine(t, up)
	// waitOpen polls /metrics until fray_open_streams is want; the
	// observers have it within the queue's delay.
	waitOpen := func(want float64) {
		t.Helper()
		var got float64
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for ; ctx.Err() == nil; <-tick.C {
			fams, _ := scrape(t, ctx, adminSrv.URL)
			if got = fams["fray_open_streams"].GetMetric()[0].GetGauge().GetValue(); got == want {
				return
			}
		}
		t.Fatalf("fray_open_streams = %v, want %v", got, want)
	}

	getCtx, hangUp := context.WithCancel(ctx)
	req := newReq(t, http.MethodGet, fray.URL+"/mcp", "",
		map[string]string{"Accept": "text/event-stream", mcp.HeaderSession: "s1"})
	resp := do(t, http.DefaultClient, req.WithContext(getCtx))
	defer resp.Body.Close()
	waitOpen(1)
	hangUp()
	waitOpen(0)
}
