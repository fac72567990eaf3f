package interop_test

import (
	"strings"

	"github.com/frayproxy/fray/checks"
	"github.com/frayproxy/fray/proxy/report"
)

// The checks revision 2026-07-28 asks for that fray's verifier does not
// hold yet, named here by the rule each holds. eraExpectation gives the
// verdict the published text gives, these findings included; checkEra
// expects them absent while they are listed in pending2026. When the
// verifier gains one, give its constant the verifier's id (checks.X) and
// take it out of pending2026: the pairs then hold it.
const (
	// "A broken response stream loses the in-flight request; clients MUST
	// re-issue it as a new request with a new request ID" (SEP-2575,
	// Final).
	c26ClientReissues = "client.reissues-cut-request"
	// "When initiating an SSE stream, servers SHOULD include the
	// X-Accel-Buffering: no header in the HTTP response" (2026-07-28
	// transports, Receiving Messages).
	c26ServerAccelBuffering = "server.x-accel-buffering"
	// "If the server does not implement the requested version ..., it MUST
	// respond with an UnsupportedProtocolVersionError listing the versions
	// it does support" (2026-07-28 versioning, Protocol Version
	// Negotiation).
	c26ServerUnsupportedVersion = "server.unsupported-version-error"
)

// pending2026 holds the ids above that fray's verifier does not give yet.
var pending2026 = map[string]bool{
	c26ClientReissues:           true,
	c26ServerAccelBuffering:     true,
	c26ServerUnsupportedVersion: true,
}

// Finding strings.
const (
	warnPriming    = checks.ServerPrimingEvent + ":warn"
	warnAccel      = c26ServerAccelBuffering + ":warn"
	failReissue    = c26ClientReissues + ":fail"
	failVersion    = c26ServerUnsupportedVersion + ":fail"
	failUnanswered = checks.E2EEveryRequestAnswered + ":fail"
	warnCancel     = checks.ServerDisconnectNotCancel + ":warn"
)

// Verdict reasons, as parts of the report's Why.
const (
	whyNoFault      = "no fault fired"
	whyClientFailed = "the client command failed"
)

// eraExpectation is the verdict a pair deserves under a profile ("" for
// none) by the published text of the revision it speaks: a MUST broken is a
// failed check, a SHOULD a warned one. It is the one table to update when
// the verifier learns 2026-07-28 (see pending2026).
//
// What each peer does, from the traces FRAY_ERAS_TRACES keeps:
//
//   - No server of these sends an event id on a stateless stream (every
//     2026-07-28 stream, and the 2025-11-25 fallbacks of the TypeScript v2
//     handler and the Go SDK's stateless handler), and mcp-go sends no
//     priming event: at 2025-11-25 that is server.priming-event's warning,
//     at 2026-07-28 nothing is owed. polling-server, retry-storm and
//     no-priming act only on priming events and ids, so on these servers no
//     fault fires: inconclusive, "no fault fired". flaky-gateway's GET
//     faults fire only for a 2025-11-25 client that opens a GET stream.
//   - The Go SDK's and mcp-go's servers send no X-Accel-Buffering on their
//     2026-07-28 SSE responses; the TypeScript v2 handler sends "no".
//   - lossy-resume cuts the tools/call stream. At 2026-07-28 none of the
//     three clients re-issues the call: the TypeScript v2 client (2.4.0)
//     waits on it until its own timeout, the Go SDK's (v1.8.0) fails it at
//     once ("request terminated without response"), mcp-go's (v1.2.1) too
//     ("transport error: unexpected nil response"). At 2025-11-25 against
//     a server without event ids nothing can be resumed, so fray blames
//     neither end; the TypeScript clients wait until their timeout
//     (typescript-sdk#2739), the Go clients fail at once.
func eraExpectation(pair, profile string) eraExpect {
	era := pair[strings.LastIndex(pair, "@")+1:]
	server := pair[strings.Index(pair, "←")+len("←") : strings.LastIndex(pair, "@")]
	var base []string // what the pair shows with no fault
	stateless := server == "ts2-server" || strings.HasPrefix(server, "go-sdk-stateless") || server == "mcp-go"
	switch {
	case era == era2026 && (strings.HasPrefix(server, "go-sdk-stateless") || server == "mcp-go"):
		base = []string{warnAccel}
	case era == era2025 && stateless:
		base = []string{warnPriming}
	}
	e := eraExpect{verdict: report.VerdictPass, findings: base}

	switch pair {
	// The Go SDK v1.8.0's stateful handler answers server/discover at
	// 2026-07-28 with a DiscoverResult whose supportedVersions leave
	// 2026-07-28 out (modelcontextprotocol/go-sdk#1025, closed upstream as
	// intended), then answers tools/list at 2026-07-28 with 400 and
	// UnsupportedProtocolVersionError. mcp-go v1.2.1 takes the discover
	// result as agreement and does not fall back to initialize; it
	// surfaces the error, which the text allows ("or surface an error to
	// the user"). The Go SDK's own client and the TypeScript v2 client
	// read supportedVersions and fall back. No fault can fire: the client
	// never calls.
	case "mcp-go←go-sdk-server@" + eraAuto:
		return eraExpect{verdict: report.VerdictFail, why: whyClientFailed, findings: []string{failVersion},
			clientFails: "the server's discover result does not offer 2026-07-28 and mcp-go keeps it; tools/list is refused"}
	// The Go SDK's stateless handler at 2025-11-25 keeps no events, yet
	// the tool's CloseSSEStream closes the call's stream (with retry: 100)
	// before the response: the client has no id to resume from, and the
	// response is never delivered. "When a rpc call is made, the Server
	// MUST reply with a Response": e2e.every-request-answered blames the
	// server, rightly.
	case "go-sdk←go-sdk-stateless-closing@" + era2025:
		return eraExpect{verdict: report.VerdictFail, why: "failed: " + checks.E2EEveryRequestAnswered,
			findings:    []string{warnPriming, failUnanswered},
			clientFails: "the stateless handler closes the call's stream with no event id to resume from"}
	}

	resumable := server == "ts1-server" || server == "go-sdk-server" // an event store, priming events
	switch profile {
	case "":
	case "polling-server", "retry-storm", "no-priming":
		if !resumable {
			e.verdict, e.why = report.VerdictInconclusive, whyNoFault
		}
		if profile == "no-priming" { // the profile turns server.priming-event off
			e.findings = without(e.findings, warnPriming)
		}
	case "flaky-gateway":
		// Its only fault that can fire here is the 502 on a standalone GET.
		if era != era2025 || server == "mcp-go" {
			e.verdict, e.why = report.VerdictInconclusive, whyNoFault
		}
	case "mobile-network":
	case "lossy-resume":
		switch {
		case resumable:
		case era == era2026:
			e.verdict, e.why = report.VerdictFail, whyClientFailed
			e.findings = append(e.findings, failReissue)
			e.clientFails = "the client does not re-issue the cut call"
		case server == "mcp-go":
			// mcp-go runs the tool in the POST's context, so the cut
			// cancels the call ("Disconnection SHOULD NOT be interpreted
			// as the client cancelling its request").
			e.verdict, e.why = report.VerdictFail, whyClientFailed
			e.findings = append(e.findings, warnCancel)
			e.clientFails = "the cut cancels the call on the server; no event ids to resume"
		default:
			e.verdict, e.why = report.VerdictFail, whyClientFailed
			e.clientFails = "no event ids: a cut stream cannot be resumed"
		}
	}
	e.faultsFire = profile != "" && e.why != whyNoFault
	return e
}

// without returns list without s.
func without(list []string, s string) []string {
	var out []string
	for _, f := range list {
		if f != s {
			out = append(out, f)
		}
	}
	return out
}
