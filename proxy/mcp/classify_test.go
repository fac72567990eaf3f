package mcp

import (
	"net/http"
	"net/url"
	"testing"
)

// legacyStub knows one legacy server: /sse streams, /messages endpoint.
type legacyStub struct{}

func (legacyStub) SSEPath(p string) bool { return p == "/sse" }

func (legacyStub) MessagePath(p string, q url.Values) (string, bool) {
	if p != "/messages" {
		return "", false
	}
	return q.Get("sessionId"), true
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name        string
		method, url string
		header      map[string]string
		rpc         RPCKind
		want        Request
	}{
		{"post of a request", "POST", "/mcp", map[string]string{"Mcp-Session-Id": "s1", "Mcp-Protocol-Version": RevPolling}, RPCRequest,
			Request{Stream: StreamPost, Session: "s1", Protocol: RevPolling}},
		{"post without JSON-RPC is no MCP stream", "POST", "/token", nil, RPCNone, Request{Stream: StreamOther}},
		{"post to a legacy endpoint", "POST", "/messages?sessionId=abc", nil, RPCRequest, Request{Stream: StreamLegacy, Session: "abc"}},
		{"post to a legacy endpoint without JSON-RPC stays legacy", "POST", "/messages?sessionId=abc", nil, RPCNone, Request{Stream: StreamLegacy, Session: "abc"}},
		{"standalone get", "GET", "/mcp", map[string]string{"Accept": "text/event-stream"}, RPCNone, Request{Stream: StreamGet}},
		{"get without Accept", "GET", "/mcp", nil, RPCNone, Request{Stream: StreamGet}},
		{"get accepting anything", "GET", "/mcp", map[string]string{"Accept": "application/json;q=0.9, */*;q=0.1"}, RPCNone, Request{Stream: StreamGet}},
		{"resumption", "GET", "/mcp", map[string]string{"Last-Event-ID": "7", "Accept": "text/event-stream"}, RPCNone,
			Request{Stream: StreamResume, HasLastEventID: true, LastEventID: "7"}},
		{"empty Last-Event-ID is still a resumption", "GET", "/mcp", map[string]string{"Last-Event-ID": ""}, RPCNone,
			Request{Stream: StreamResume, HasLastEventID: true}},
		{"legacy stream", "GET", "/sse", nil, RPCNone, Request{Stream: StreamLegacy}},
		{"oauth discovery", "GET", "/.well-known/oauth-protected-resource/mcp", map[string]string{"Accept": "application/json"}, RPCNone, Request{Stream: StreamOther}},
		{"oauth discovery accepting anything", "GET", "/.well-known/oauth-authorization-server", nil, RPCNone, Request{Stream: StreamOther}},
		{"get of a JSON document", "GET", "/health", map[string]string{"Accept": "application/json"}, RPCNone, Request{Stream: StreamOther}},
		{"delete", "DELETE", "/mcp", map[string]string{"Mcp-Session-Id": "s1"}, RPCNone, Request{Stream: StreamOther, Session: "s1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := url.Parse(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			if got := Classify(tt.method, u, h, tt.rpc, legacyStub{}); got != tt.want {
				t.Errorf("Classify(%s %s) = %+v, want %+v", tt.method, tt.url, got, tt.want)
			}
		})
	}
}

func TestClassifyWithoutLegacyKnowledge(t *testing.T) {
	u, _ := url.Parse("/sse")
	if got := Classify("GET", u, http.Header{}, RPCNone, nil).Stream; got != StreamGet {
		t.Errorf("GET /sse with no legacy knowledge = %v, want get", got)
	}
}

func TestNamesRoundTrip(t *testing.T) {
	for _, n := range StreamTypeNames() {
		if st, ok := ParseStreamType(n); !ok || st.String() != n {
			t.Errorf("stream type %q does not round-trip (%v, %v)", n, st, ok)
		}
	}
	for _, n := range RPCKindNames() {
		if k, ok := ParseRPCKind(n); !ok || k.String() != n {
			t.Errorf("rpc kind %q does not round-trip (%v, %v)", n, k, ok)
		}
	}
	if _, ok := ParseStreamType("posts"); ok {
		t.Error(`ParseStreamType("posts") succeeded`)
	}
}

func TestRevisions(t *testing.T) {
	tests := []struct {
		rev                        string
		resumable, primes, session bool
	}{
		{"", false, false, true},
		{RevLegacy, false, false, false},
		{RevStreamable, true, false, true},
		{"2025-06-18", true, false, true},
		{RevPolling, true, true, true},
		{RevStateless, false, false, false},
	}
	for _, tt := range tests {
		if Resumable(tt.rev) != tt.resumable || Primes(tt.rev) != tt.primes || Sessions(tt.rev) != tt.session {
			t.Errorf("revision %q: resumable %v primes %v sessions %v, want %v %v %v", tt.rev,
				Resumable(tt.rev), Primes(tt.rev), Sessions(tt.rev), tt.resumable, tt.primes, tt.session)
		}
	}
}

func TestMediaType(t *testing.T) {
	for in, want := range map[string]string{
		"text/event-stream":                "text/event-stream",
		"Text/Event-Stream; charset=utf-8": "text/event-stream",
		"text/event-stream; charset":       "text/event-stream",
		"application/json":                 "application/json",
		"":                                 "",
		"not a type":                       "",
	} {
		if got := MediaType(in); got != want {
			t.Errorf("MediaType(%q) = %q, want %q", in, got, want)
		}
	}
}
