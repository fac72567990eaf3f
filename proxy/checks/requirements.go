package checks

// Requirement is a row of the MCP conformance suite's requirement files
// (@modelcontextprotocol/conformance, src/seps/*.yaml), in their form:
// the check id, the requirement text quoted, and the URL of the section.
// The zero value is no requirement.
type Requirement struct {
	Check string `json:"check"`
	Text  string `json:"text"`
	URL   string `json:"url,omitempty"`
}

// suiteGaps holds, by fray's check id, the requirement each check judges
// on live traffic that the conformance suite leaves untested: a row its
// files list with no scenario behind it, or a rule they have no row for
// (then the check is fray's own id).
var suiteGaps = map[string]Requirement{
	ServerSilentAfterCancel: {Check: "sep-2575-http-server-stops-on-cancel",
		Text: "The server SHOULD stop work on the cancelled request as soon as practical and MUST NOT send any further messages for it [HTTP].",
		URL:  "https://modelcontextprotocol.io/specification/draft/basic/transports#cancellation-1"},
	ClientReissuesCutRequest: {Check: ClientReissuesCutRequest,
		Text: "A broken response stream loses the in-flight request; clients MUST re-issue it as a new request with a new request ID.",
		URL:  "https://modelcontextprotocol.io/specification/draft/changelog"},
	ServerPrimingEventGet: {Check: "sep-1699-get-stream-polling",
		Text: "If the server closes the connection without terminating the stream, it SHOULD follow the same polling behavior as described for POST requests: sending a `retry` field and allowing the client to reconnect.",
		URL:  "https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#listening-for-messages-from-the-server"},
}

// SuiteGap returns the conformance suite's requirement that the check id
// judges where the suite does not, and whether there is one.
func SuiteGap(id string) (Requirement, bool) {
	r, ok := suiteGaps[id]
	return r, ok
}
