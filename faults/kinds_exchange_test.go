package faults_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/mcp"
)

func resumeEx(lastID string) *mcp.Exchange {
	h := http.Header{}
	if lastID != "" {
		h.Set("Last-Event-ID", lastID)
	}
	return &mcp.Exchange{Method: "GET", Path: "/mcp", Stream: mcp.StreamResume, SessionSeq: 1, StreamSeq: 1, Header: h}
}

func TestExchangeKinds(t *testing.T) {
	tests := []struct {
		name  string
		spec  faults.Spec
		ex    *mcp.Exchange
		fired bool
		check func(t *testing.T, a faults.ExchangeAction)
	}{
		{"status", spec("status", "status", int64(503), "retry_after", "1500ms", "body", "busy", "headers", map[string]any{"X-Why": "test"}), postEx(), true,
			func(t *testing.T, a faults.ExchangeAction) {
				if a.Status != 503 || a.Header.Get("Retry-After") != "2" || a.Header.Get("X-Why") != "test" || string(a.Body) != "busy" {
					t.Errorf("got %d %v %q", a.Status, a.Header, a.Body)
				}
			}},
		{"latency", spec("latency", "delay", "2s"), postEx(), true, func(t *testing.T, a faults.ExchangeAction) {
			if a.Latency != 2*time.Second {
				t.Errorf("Latency = %v", a.Latency)
			}
		}},
		{"drop-request", spec("drop-request"), postEx(), true, func(t *testing.T, a faults.ExchangeAction) {
			if !a.DropRequest || a.Hang {
				t.Errorf("DropRequest %v Hang %v", a.DropRequest, a.Hang)
			}
		}},
		{"drop-request hang", spec("drop-request", "hang", true), postEx(), true, func(t *testing.T, a faults.ExchangeAction) {
			if !a.DropRequest || !a.Hang {
				t.Errorf("DropRequest %v Hang %v", a.DropRequest, a.Hang)
			}
		}},
		{"strip-last-event-id", spec("strip-last-event-id"), resumeEx("5"), true, func(t *testing.T, a faults.ExchangeAction) {
			if !a.StripLastEventID {
				t.Error("not stripped")
			}
		}},
		{"strip-last-event-id without one", spec("strip-last-event-id"), resumeEx(""), false, nil},
		{"rewrite-last-event-id template", spec("rewrite-last-event-id", "id", "{id}0"), resumeEx("5"), true, func(t *testing.T, a faults.ExchangeAction) {
			if !a.HasLastEventID || a.SetLastEventID != "50" {
				t.Errorf("SetLastEventID %q %v", a.SetLastEventID, a.HasLastEventID)
			}
		}},
		{"rewrite-last-event-id template without one", spec("rewrite-last-event-id", "id", "{id}0"), resumeEx(""), false, nil},
		{"rewrite-last-event-id fixed sets one", spec("rewrite-last-event-id", "id", "stale"), resumeEx(""), true, func(t *testing.T, a faults.ExchangeAction) {
			if a.SetLastEventID != "stale" {
				t.Errorf("SetLastEventID %q", a.SetLastEventID)
			}
		}},
		{"strip-header response", spec("strip-header", "header", "mcp-session-id"), postEx(), true, func(t *testing.T, a faults.ExchangeAction) {
			if !slices.Equal(a.StripResponseHeaders, []string{"Mcp-Session-Id"}) || a.StripRequestHeaders != nil {
				t.Errorf("got %v %v", a.StripResponseHeaders, a.StripRequestHeaders)
			}
		}},
		{"strip-header request", spec("strip-header", "header", "Accept", "direction", "request"), postEx(), true, func(t *testing.T, a faults.ExchangeAction) {
			if !slices.Equal(a.StripRequestHeaders, []string{"Accept"}) {
				t.Errorf("got %v", a.StripRequestHeaders)
			}
		}},
		{"rewrite-header", spec("rewrite-header", "header", "mcp-name", "value", "fray-mismatch"), postEx(), true, func(t *testing.T, a faults.ExchangeAction) {
			if !slices.Equal(a.SetRequestHeaders, []faults.HeaderSet{{Name: "Mcp-Name", Value: "fray-mismatch"}}) || a.StripRequestHeaders != nil {
				t.Errorf("got %v %v", a.SetRequestHeaders, a.StripRequestHeaders)
			}
		}},
		{"rewrite-header leaves a GET alone", spec("rewrite-header", "header", "Mcp-Name", "value", "x"), resumeEx("5"), false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := compile(t, 1, tt.spec).Exchange(tt.ex)
			if got := len(a.Fired) == 1; got != tt.fired {
				t.Fatalf("fired = %v (%v), want %v", got, a.Fired, tt.fired)
			}
			if tt.fired {
				if a.Fired[0].Kind != tt.spec.Kind {
					t.Errorf("Firing kind %q, want %q", a.Fired[0].Kind, tt.spec.Kind)
				}
				tt.check(t, a)
			}
		})
	}
}

func TestStatusLowestIndexWins(t *testing.T) {
	set := compile(t, 1, spec("status", "status", int64(502)), spec("status", "status", int64(503)))
	if a := set.Exchange(postEx()); a.Status != 502 || len(a.Fired) != 2 {
		t.Errorf("Status %d fired %v, want 502 and two firings", a.Status, a.Fired)
	}
}
