package verify

import (
	"fmt"
	"net/http"

	"github.com/frayproxy/fray/proxy/mcp"
)

// upstreamAnswered records an answer of the upstream to x: isMCP says
// whether it shows an MCP endpoint (an event stream, 202 Accepted, or a
// body of JSON-RPC messages); what, for one that does not, what it was
// ("404", "200 without a JSON-RPC message"). A run whose every answer
// showed none reached no MCP endpoint: the client used a wrong path, or
// the upstream is not an MCP server. Exchanges that are not MCP's (an
// OAuth request, a DELETE) say nothing either way.
func (v *Verifier) upstreamAnswered(x *exch, isMCP bool, what string) {
	switch {
	case x.stream == mcp.StreamOther:
		return
	case isMCP:
		v.mcpAnswers++
	case v.offEndpoint == "":
		v.offEndpoint = fmt.Sprintf("%s %s answered %s", x.method, x.path, what)
	}
}

// bodyAnswer says what a response that was not an event stream showed:
// whether it is an MCP endpoint's (202, or JSON-RPC messages in the body),
// and otherwise what it was.
func bodyAnswer(status, messages int) (isMCP bool, what string) {
	switch {
	case messages > 0 || status == http.StatusAccepted:
		return true, ""
	case status == http.StatusNotFound || status == http.StatusMethodNotAllowed:
		return false, fmt.Sprint(status)
	}
	return false, fmt.Sprintf("%d without a JSON-RPC message", status)
}

// noEndpoint says why a run reached no MCP endpoint, "" when it did.
func (v *Verifier) noEndpoint() string {
	if v.mcpAnswers > 0 || v.offEndpoint == "" {
		return ""
	}
	return "no request reached an MCP endpoint: the upstream answered none with an event stream, 202 or a JSON-RPC message (" +
		v.offEndpoint + "); point the client at the server's MCP endpoint (the path the server serves MCP on, often /mcp)"
}
