package interop_test

import (
	"slices"
	"strings"

	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/report"
)

// Finding strings.
const (
	warnPriming    = checks.ServerPrimingEvent + ":warn"
	warnAccel      = checks.ServerAccelBuffering + ":warn"
	failReissue    = checks.ClientReissuesCutRequest + ":fail"
	failUnanswered = checks.E2EEveryRequestAnswered + ":fail"
	warnCancel     = checks.ServerDisconnectNotCancel + ":warn"
	warnListen     = checks.ClientListensAgain + ":warn"
)

// Verdict reasons, as parts of the report's Why.
const (
	whyNoFault      = "no fault fired"
	whyNoRecovery   = "the recovery the profile exists for never happened"
	whyClientFailed = "the client command failed"
	whyReissue      = "failed: " + checks.ClientReissuesCutRequest
)

// eraExpectation is the verdict a pair deserves under a profile ("" for
// none) by the published text of the revision it speaks: a MUST broken is a
// failed check, a SHOULD a warned one. It is the one table of what fray
// finds on these peers; docs/checks.md ("Peers of both eras") tells it.
//
// What each peer does, from the traces FRAY_ERAS_TRACES keeps:
//
//   - No server of these sends an event id on a stateless stream (every
//     2026-07-28 stream, and the 2025-11-25 fallbacks of the TypeScript v2
//     handler and the Go SDK's stateless handler), and mcp-go sends no
//     priming event: at 2025-11-25 that is server.priming-event's warning,
//     at 2026-07-28 nothing is owed. polling-server, retry-storm,
//     no-priming, cut-fin, cut-rst and gateway-errors act only on priming
//     events, ids and resumptions, so on these servers no fault fires:
//     inconclusive, "no fault fired". flaky-gateway's GET faults fire only
//     for a 2025-11-25 client that opens a GET stream (gateway-errors' 429
//     likewise), and its reset, after a priming event, not at all: the 502 alone exercises the retry, not
//     the cut the profile also exists for, so the verdict is inconclusive.
//     mobile-network's reset waits for a priming event too: its latency,
//     jitter and fragments alone are decorative, and the verdict is
//     inconclusive, "the recovery the profile exists for never happened".
//   - The Go SDK's servers (stateless, and the stateful one answering the
//     2026-07-28 server/discover) and mcp-go's send no X-Accel-Buffering
//     on the SSE streams they start for 2026-07-28 requests: a warning of
//     server.x-accel-buffering on every run. The TypeScript v2 handler
//     sends "no".
//   - lossy-resume and stateless-cut cut the tools/call stream. At
//     2026-07-28 none of the three clients re-issues the call: the
//     TypeScript v2 client (2.4.0) waits on it until its own timeout, the
//     Go SDK's (v1.8.0) fails it at once ("request terminated without
//     response"), mcp-go's (v1.2.1) too ("transport error: unexpected nil
//     response"). client.reissues-cut-request fails, with fray's cut as the
//     evidence's fault; the server, which stopped as a cancellation asks,
//     is not blamed. At 2025-11-25 against a server without event ids
//     nothing can be resumed (the cut is unrecoverable), so fray blames
//     neither end; the TypeScript clients wait until their timeout
//     (typescript-sdk#2739), the Go clients fail at once. Both profiles
//     cut the first call they can, so every client meets its cut.
//   - stateless-cut resets the TypeScript v2 client's subscriptions/listen
//     stream after its acknowledgement, on the list_changed the server
//     publishes when the cut call ends (modern-server.mjs
//     --notify-list-changed), so that the reset does not wait on another
//     run's call; the client does not listen again (client.listens-again,
//     a MAY, warns).
//   - buffering-proxy leaves alone the streams of the TypeScript servers,
//     which send X-Accel-Buffering: no, as nginx does: no fault fires. On
//     the Go SDK's and mcp-go's it buffers, and their pairs pass.
//   - idle-cut-125s and idle-cut-300s time out streams silent for minutes:
//     in a run of a second their faults are armed and never act, so the
//     verdict is inconclusive.
func eraExpectation(pair, profile string) eraExpect {
	era := pair[strings.LastIndex(pair, "@")+1:]
	server := pair[strings.Index(pair, "←")+len("←") : strings.LastIndex(pair, "@")]
	var base []string // what the pair shows with no fault
	stateless := server == "ts2-server" || strings.HasPrefix(server, "go-sdk-stateless") || server == "mcp-go"
	switch {
	case era == era2026 && (strings.HasPrefix(server, "go-sdk-stateless") || server == "mcp-go"),
		era == eraAuto && server == "go-sdk-server":
		base = []string{warnAccel}
	case era == era2025 && stateless:
		base = []string{warnPriming}
	}
	e := eraExpect{verdict: report.VerdictPass, findings: base}
	// listens: the client opens a subscriptions/listen stream before its
	// call (the TypeScript v2 pair at 2026-07-28).
	listens := pair == "ts2←ts2-server@"+era2026

	switch pair {
	// The Go SDK v1.8.0's stateful handler answers server/discover at
	// 2026-07-28 with a DiscoverResult whose supportedVersions leave
	// 2026-07-28 out (modelcontextprotocol/go-sdk#1025, closed upstream as
	// intended), then refuses tools/list at 2026-07-28 with 400 and
	// UnsupportedProtocolVersionError, as it must
	// (server.unsupported-version-error passes). mcp-go v1.2.1 takes the
	// discover result as agreement and does not fall back to initialize;
	// it surfaces the error, which the text allows ("or surface an error
	// to the user"). The Go SDK's own client and the TypeScript v2 client
	// read supportedVersions and fall back. No fault can fire: the client
	// never calls. Whether a discover result may decline the revision it
	// was asked in, rather than refuse it, the text leaves open, so fray
	// does not judge it.
	case "mcp-go←go-sdk-server@" + eraAuto:
		return eraExpect{verdict: report.VerdictFail, why: whyClientFailed, findings: base,
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
	noFault := func() { e.verdict, e.why = report.VerdictInconclusive, whyNoFault }
	noRecovery := func() { e.verdict, e.why = report.VerdictInconclusive, whyNoRecovery }
	// unresumable is a 2025-11-25 cut of the call on a server without
	// event ids: no pair can recover it, and the client fails.
	unresumable := func() {
		e.verdict, e.why = report.VerdictFail, whyClientFailed
		if server == "mcp-go" {
			// mcp-go runs the tool in the POST's context, so the cut
			// cancels the call ("Disconnection SHOULD NOT be interpreted
			// as the client cancelling its request").
			e.findings = append(e.findings, warnCancel)
			e.clientFails = "the cut cancels the call on the server; no event ids to resume"
			return
		}
		e.clientFails = "no event ids: a cut stream cannot be resumed"
	}
	notReissued := func() {
		e.verdict, e.why = report.VerdictFail, whyReissue
		e.findings = append(e.findings, failReissue)
		e.clientFails = "the client does not re-issue the cut call"
	}
	switch profile {
	case "":
	case "polling-server", "retry-storm", "no-priming", "cut-fin", "cut-rst", "gateway-errors":
		switch {
		case resumable:
		case profile == "gateway-errors" && era == era2025 && server != "mcp-go":
			// Its 429 answers the standalone GET the 2025-11-25 client
			// opens (it acts on its first opportunity): a retry, but not
			// the cut the profile also exists for.
			noRecovery()
		default:
			noFault()
		}
		if profile == "no-priming" { // the profile turns server.priming-event off
			e.findings = without(e.findings, warnPriming)
		}
	case "idle-cut-125s", "idle-cut-300s":
		noFault()
	case "flaky-gateway":
		// Its only fault that can fire here is the 502 on a standalone GET.
		switch {
		case resumable:
		case era != era2025 || server == "mcp-go":
			noFault()
		default:
			noRecovery()
		}
	case "mobile-network":
		if !resumable {
			noRecovery()
		}
	case "buffering-proxy":
		if server == "ts2-server" || server == "ts1-server" {
			// The TypeScript servers send X-Accel-Buffering: no, which
			// the buffer honours, as nginx does.
			noFault()
		}
	case "stateless-cut":
		switch {
		case listens:
			// Its listen stream is reset after the acknowledgement, and
			// it does not listen again (a MAY: a warning); its call is
			// cut and not re-issued.
			notReissued()
			e.findings = append(e.findings, warnListen)
		case era == era2026:
			notReissued()
		case !resumable:
			unresumable()
		}
	case "lossy-resume":
		switch {
		case resumable:
		case listens:
			// The first POST stream it can hit is the listen stream,
			// which the client does not listen again after (a MAY).
			notReissued()
			e.maybe = append(e.maybe, warnListen)
		case era == era2026:
			notReissued()
		default:
			unresumable()
		}
	}
	e.faultsFire = profile != "" && e.why != whyNoFault
	return e
}

// without returns list without s.
func without(list []string, s string) []string {
	return slices.DeleteFunc(slices.Clone(list), func(f string) bool { return f == s })
}
