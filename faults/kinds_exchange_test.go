package faults_test

import (
	"net/http"
	"reflect"
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
		name string
		spec faults.Spec
		ex   *mcp.Exchange
		// want is the action, without Fired; the zero action is none fired.
		want faults.ExchangeAction
	}{
		{"status", spec("status", "status", int64(503), "retry_after", "1500ms", "body", "busy",
			"headers", map[string]any{"X-Why": "test"}), postEx(),
			faults.ExchangeAction{Status: 503, Body: []byte("busy"),
				Header: http.Header{"Retry-After": {"2"}, "X-Why": {"test"}}}},
		{"latency", spec("latency", "delay", "2s"), postEx(), faults.ExchangeAction{Latency: 2 * time.Second}},
		{"drop-request", spec("drop-request"), postEx(), faults.ExchangeAction{DropRequest: true}},
		{"drop-request hang", spec("drop-request", "hang", true), postEx(),
			faults.ExchangeAction{DropRequest: true, Hang: true}},
		{"strip-last-event-id", spec("strip-last-event-id"), resumeEx("5"),
			faults.ExchangeAction{StripLastEventID: true}},
		{"strip-last-event-id without one", spec("strip-last-event-id"), resumeEx(""), faults.ExchangeAction{}},
		{"rewrite-last-event-id template", spec("rewrite-last-event-id", "id", "{id}0"), resumeEx("5"),
			faults.ExchangeAction{SetLastEventID: "50", HasLastEventID: true}},
		{"rewrite-last-event-id template without one", spec("rewrite-last-event-id", "id", "{id}0"), resumeEx(""),
			faults.ExchangeAction{}},
		{"rewrite-last-event-id fixed sets one", spec("rewrite-last-event-id", "id", "stale"), resumeEx(""),
			faults.ExchangeAction{SetLastEventID: "stale", HasLastEventID: true}},
		{"strip-header response", spec("strip-header", "header", "mcp-session-id"), postEx(),
			faults.ExchangeAction{StripResponseHeaders: []string{"Mcp-Session-Id"}}},
		{"strip-header request", spec("strip-header", "header", "Accept", "direction", "request"), postEx(),
			faults.ExchangeAction{StripRequestHeaders: []string{"Accept"}}},
		{"rewrite-header", spec("rewrite-header", "header", "mcp-name", "value", "fray-mismatch"), postEx(),
			faults.ExchangeAction{SetRequestHeaders: []faults.HeaderSet{{Name: "Mcp-Name", Value: "fray-mismatch"}}}},
		{"rewrite-header leaves a GET alone", spec("rewrite-header", "header", "Mcp-Name", "value", "x"),
			resumeEx("5"), faults.ExchangeAction{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := compile(t, 1, tt.spec).Exchange(tt.ex)
			fired := !reflect.DeepEqual(tt.want, faults.ExchangeAction{})
			if got := len(a.Fired) == 1; got != fired {
				t.Fatalf("fired = %v (%v), want %v", got, a.Fired, fired)
			}
			if fired && a.Fired[0].Kind != tt.spec.Kind {
				t.Errorf("Firing kind %q, want %q", a.Fired[0].Kind, tt.spec.Kind)
			}
			a.Fired = nil
			if !reflect.DeepEqual(a, tt.want) {
				t.Errorf("action %+v, want %+v", a, tt.want)
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
