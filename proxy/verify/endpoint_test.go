package verify

import (
	"net/http"
	"strings"
	"testing"

	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
)

func TestBodyAnswer(t *testing.T) {
	for _, tc := range []struct {
		status, messages int
		isMCP            bool
		what             string
	}{
		{http.StatusOK, 1, true, ""},
		{http.StatusBadRequest, 1, true, ""}, // a JSON-RPC error with an HTTP error status
		{http.StatusAccepted, 0, true, ""},
		{http.StatusNotFound, 0, false, "404"},
		{http.StatusMethodNotAllowed, 0, false, "405"},
		{http.StatusOK, 0, false, "200 without a JSON-RPC message"},
	} {
		isMCP, what := bodyAnswer(tc.status, tc.messages)
		if isMCP != tc.isMCP || what != tc.what {
			t.Errorf("bodyAnswer(%d, %d) = %v %q, want %v %q", tc.status, tc.messages, isMCP, what, tc.isMCP, tc.what)
		}
	}
}

// TestNoMCPEndpoint: a run in which the upstream answered no request as an
// MCP endpoint does (every answer 404 or 405, or no JSON-RPC answer) is
// inconclusive, naming a request and its answer; one MCP answer is enough,
// and requests that are not MCP's say nothing.
func TestNoMCPEndpoint(t *testing.T) {
	tell(t, fresh, (*timeline).final, []story{
		{"every answer 404", func(tl *timeline) {
			tl.request("POST", "/wrong", mcp.StreamPost, "", `{"jsonrpc":"2.0","id":0,"method":"initialize"}`).respond(404, false, "").end(observe.Complete)
			tl.get("").respond(405, false, "").end(observe.Complete)
		}, all(verdict(report.VerdictInconclusive, "no request reached an MCP endpoint"),
			verdict(report.VerdictInconclusive, "(POST /wrong answered 404)"))},
		{"no JSON-RPC answer", func(tl *timeline) {
			tl.request("POST", "/", mcp.StreamPost, "", `{"jsonrpc":"2.0","id":0,"method":"initialize"}`).respond(200, false, "").end(observe.Complete)
		}, verdict(report.VerdictInconclusive, "(POST / answered 200 without a JSON-RPC message)")},
		{"an MCP answer", func(tl *timeline) {
			tl.request("GET", "/.well-known/oauth-protected-resource", mcp.StreamOther, "", "").respond(404, false, "").end(observe.Complete)
			tl.get("").respond(405, false, "").end(observe.Complete)
			tl.call("", 0, "initialize").respond(200, false, "").jsonAnswer("0")
		}, func(t *testing.T, r report.Report) {
			if strings.Contains(r.Why, "MCP endpoint") {
				t.Errorf("verdict %s (%s)", r.Verdict, r.Why)
			}
		}},
	})
}
