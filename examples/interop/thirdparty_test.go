package interop_test

import (
	"cmp"
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/frayproxy/fray/examples/mcpgo/mcpgopeer"
	"github.com/frayproxy/fray/proxy/checks"
)

// thirdPartyPair is a client and a server of which at least one is not the
// project's own nor an official SDK.
type thirdPartyPair struct {
	name   string
	start  startServer
	client runClientFor
	// profiles are the built-in profiles the pair runs under besides none:
	// the Streamable HTTP ones that probe what the pair offers, or
	// legacy-sse for a legacy pair.
	profiles []string
	// isolate gives each run a server of its own, for a server that
	// cannot serve two clients at once (see its pair).
	isolate bool
	// timeout is the client's; zero means thirdPartyClientTimeout.
	timeout time.Duration
	// goOnly: neither peer needs Node.js.
	goOnly bool
	// progressFromTrace: the server may send fewer progress notifications
	// than the call asks for, so the client's are held to those fray's
	// trace shows it delivered, rather than to a count (see callBridged).
	progressFromTrace bool
}

// thirdPartyPairs is every pair, named client←server.
var thirdPartyPairs = []thirdPartyPair{
	// Servers, called by the official SDKs' clients.
	{name: "ts←server-everything", start: startEverything, client: tsThirdParty(callEverythingLong, "streamable", ""),
		profiles: []string{"polling-server", "lossy-resume"}, timeout: patientClientTimeout},
	{name: "ts←fastmcp", start: startFastMCP, client: tsThirdParty(callSlowCount, "streamable", ""), profiles: []string{"polling-server", "lossy-resume"}},
	{name: "go-sdk←fastmcp", start: startFastMCP, client: goSDKClient(false), profiles: []string{"polling-server"}},
	{name: "ts←tmcp", start: startTMCP, client: tsThirdParty(callSlowCount, "streamable", ""), profiles: []string{"lossy-resume"}},
	{name: "go-sdk←tmcp", start: startTMCP, client: goSDKClient(false), profiles: []string{"lossy-resume"}},
	{name: "ts←mcp-go", start: startMCPGo(mcpgopeer.Streamable), client: tsThirdParty(callMCPGo, "streamable", ""), profiles: []string{"lossy-resume"}},
	{name: "go-sdk←mcp-go", start: startMCPGo(mcpgopeer.Streamable), client: goSDKClient(true), goOnly: true},
	// Bridges of server-everything's stdio mode.
	{name: "ts←supergateway", start: startSupergateway, client: tsThirdParty(callLongRunning, "streamable", ""), profiles: []string{"lossy-resume"}},
	{name: "ts-sse←supergateway-sse", start: startSupergatewaySSE, client: tsThirdParty(callLongRunning, "sse", ""), profiles: []string{"legacy-sse"}, isolate: true},
	{name: "ts←mcp-proxy", start: startMCPProxy, client: tsThirdParty(callBridged, "streamable", ""), profiles: []string{"polling-server", "lossy-resume"}, progressFromTrace: true},
	{name: "ts-sse←mcp-proxy-sse", start: startMCPProxySSE, client: tsThirdParty(callBridged, "sse", ""), profiles: []string{"legacy-sse"}, progressFromTrace: true},
	// Clients, against the official SDKs' servers.
	{name: "mcp-remote←ts-server", start: startTSStreamableThird, client: tsThirdParty(callSlowCountClosing, "mcp-remote", "http-first"), profiles: []string{"polling-server", "flaky-gateway"}},
	{name: "mcp-remote←go-sdk-server", start: startGoStreamable, client: tsThirdParty(callSlowCountClosing, "mcp-remote", "http-first"), profiles: []string{"polling-server"}},
	{name: "inspector←ts-server", start: startTSStreamableThird, client: inspectorThirdParty(callSlowCountClosing, "http"), profiles: []string{"polling-server"}},
	{name: "inspector←go-sdk-server", start: startGoStreamable, client: inspectorThirdParty(callSlowCountClosing, "http"), profiles: []string{"polling-server"}},
	{name: "mcp-go←ts-server", start: startTSStreamableThird, client: mcpGoClient(callSlowCountClosing, mcpgopeer.Streamable), profiles: []string{"polling-server", "lossy-resume", "flaky-gateway"}},
	{name: "mcp-go←go-sdk-server", start: startGoStreamable, client: mcpGoClient(callSlowCountClosing, mcpgopeer.Streamable), profiles: []string{"polling-server", "lossy-resume"}},
	// The legacy HTTP+SSE transport.
	{name: "mcp-go-sse←mcp-go-sse", start: startMCPGo(mcpgopeer.SSE), client: mcpGoClient(callSlowCount, mcpgopeer.SSE), profiles: []string{"legacy-sse"}, goOnly: true},
	{name: "mcp-remote-sse←ts-legacy", start: startTSLegacy, client: tsThirdParty(callSlowCount, "mcp-remote", "sse-only"), profiles: []string{"legacy-sse"}},
}

// thirdPartySeeds overrides a profile's seed where its own spares the call
// the pair makes: lossy-resume hits half the POST streams, chosen by the
// seed, and these pairs' tools/call stream is not among seed 42's half.
var thirdPartySeeds = map[string]*uint64{
	"go-sdk←tmcp/lossy-resume":          ptr(uint64(3)),
	"mcp-go←ts-server/lossy-resume":     ptr(uint64(3)),
	"mcp-go←go-sdk-server/lossy-resume": ptr(uint64(3)),
}

// Time limits. A run that a pair cannot finish (the expectation says why)
// costs its client timeout, so it is kept short; the SDKs' reconnection
// waits (1 s, then 1.5 s) fit well inside it.
const (
	thirdPartyClientTimeout = 12 * time.Second
	thirdPartyPairTimeout   = 75 * time.Second
	// thirdPartyAnswerDeadline is the verifier's answer deadline here, in
	// place of the default 30 s (verify.Options.AnswerDeadline): every call
	// of these pairs ends within 3 s, so a request still unanswered 10 s
	// after its session last did anything is not coming.
	thirdPartyAnswerDeadline = 10 * time.Second
	// patientClientTimeout outlasts that deadline, so that a call a server
	// never answers is past its deadline while the client still waits, not
	// excused because the client gave up first.
	patientClientTimeout = 16 * time.Second
)

// TestThirdPartyPairs runs every third-party pair directly, then through
// fray with no profile and under the profiles the pair is listed with, all
// runs of a pair at once against one server. The direct run and the run
// with no profile must succeed (fray is transparent); each verdict is held
// to thirdPartyExpectation, and the client's outcome to its clientFails.
//
// FRAY_THIRDPARTY_TRACES=DIR keeps each run's trace (PAIR__PROFILE.jsonl)
// and its outcome (PAIR__PROFILE.json) in DIR, for `fray check`, `fray
// report --html` and `fray replay`.
func TestThirdPartyPairs(t *testing.T) {
	if testing.Short() {
		t.Skip("third-party pairs run real peers for about a minute; not in -short")
	}
	keep := os.Getenv("FRAY_THIRDPARTY_TRACES")
	for _, pr := range thirdPartyPairs {
		t.Run(pr.name, func(t *testing.T) {
			t.Parallel()
			if !pr.goOnly {
				// Here, on the test's goroutine: the clients run on others,
				// where a skip would not stop the test.
				requireNode(t)
			}
			ctx, cancel := context.WithTimeout(context.Background(), thirdPartyPairTimeout)
			defer cancel()
			direct, outcomes := runPair(ctx, t, pr.name, pr.start, pr.isolate, pr.profiles, func(profile string) *uint64 { return thirdPartySeeds[pr.name+"/"+profile] },
				pr.client, cmp.Or(pr.timeout, thirdPartyClientTimeout), keep)
			if !direct.OK {
				t.Fatalf("client failed against the server directly: %s", direct.Error)
			}
			for _, o := range outcomes {
				checkThirdParty(t, pr.name, o)
				if pr.progressFromTrace && o.Err == "" {
					checkDeliveredProgress(t, o)
				}
			}
		})
	}
}

// runPair runs client directly, and through fray with no profile and
// under each of profiles, all at once against one server start starts (or,
// with isolate, a server each); seed gives each profile's seed. Traces go
// to keep (or a temporary folder), and with keep the outcomes too.
func runPair(ctx context.Context, t *testing.T, pair string, start startServer, isolate bool, profiles []string, seed func(profile string) *uint64,
	client runClientFor, timeout time.Duration, keep string) (direct clientRun, outcomes []frayOutcome) {
	ups := make([]upstream, len(profiles)+2) // the direct run, none, the profiles
	for i := range ups {
		if i == 0 || isolate {
			ups[i] = start(ctx, t)
		} else {
			ups[i] = ups[0]
		}
	}
	dir := cmp.Or(keep, t.TempDir())
	outcomes = make([]frayOutcome, len(profiles)+1)
	var wg sync.WaitGroup
	wg.Go(func() { direct = client(ctx, t, ups[0].origin+ups[0].path, timeout) })
	for i, name := range append([]string{""}, profiles...) {
		wg.Go(func() {
			base := fileName(pair, name)
			outcomes[i] = frayRunThirdParty(ctx, t, ups[i+1], name, seed(name), client, timeout, dir+"/"+base+".jsonl")
			if err := keepOutcome(keep, base, outcomes[i]); err != nil {
				t.Errorf("keep outcome: %v", err)
			}
		})
	}
	wg.Wait()
	return direct, outcomes
}

// checkThirdParty holds one outcome to its expectation: the correct
// verdict, or, while fray's verifier still gives another, exactly the
// verdict it gives today (thirdPartyGaps), unless FRAY_THIRDPARTY_STRICT=1
// asks for the correct one regardless. A gap whose verdict fray no longer
// gives fails the test, so that its entry is removed once fray is fixed.
func checkThirdParty(t *testing.T, pair string, o frayOutcome) {
	t.Helper()
	name := cmp.Or(o.Profile, "none")
	if o.Err != "" {
		t.Errorf("%s: fray run: %s", name, o.Err)
		return
	}
	got := findings(o.Report)
	want := thirdPartyExpectation(pair, o.Profile)
	t.Logf("%s: client ok=%v %s; verdict %s; findings %v; excused %v; drained %v; trace %s",
		name, o.Client.OK, o.Client.Error, o.Report.Verdict, got, excuses(o.Report), o.Drained, o.Trace)
	if o.Profile == "" && !o.Client.OK {
		t.Errorf("none: the client failed through fray with no fault: %s (fray must be transparent)", o.Client.Error)
	}
	if o.Client.OK != (want.clientFails == "") {
		t.Errorf("%s: client ok=%v (%s), expected failure: %q", name, o.Client.OK, o.Client.Error, want.clientFails)
	}
	if o.Profile != "" && o.Report.Totals.Faults == 0 {
		t.Errorf("%s: no fault fired", name)
	}
	gap, known := thirdPartyGaps[pair+"/"+name]
	switch {
	case !known || os.Getenv("FRAY_THIRDPARTY_STRICT") == "1":
		if !sameFindings(got, want) {
			t.Errorf("%s: findings %v, want %v (and maybe %v)\n%s", name, got, want.findings, want.maybe, evidence(o.Report))
		}
	case sameFindings(got, want):
		t.Errorf("%s: fray now gives the correct verdict %v; remove the gap entry (%s)", name, got, gap.why)
	case !sameFindings(got, expectation{findings: gap.today, maybe: want.maybe}):
		t.Errorf("%s: findings %v; want %v, or what fray gave before its fix, %v (and maybe %v)\n%s",
			name, got, want.findings, gap.today, want.maybe, evidence(o.Report))
	default:
		t.Logf("%s: KNOWN GAP: fray gives %v, the correct verdict is %v: %s", name, got, want.findings, gap.why)
	}
}

// thirdPartyExpectation is the verdict a pair deserves under a profile
// ("" for none), per the published 2025-11-25 text: a MUST broken is a
// failed check, a SHOULD a warned one (no built-in profile changes a
// severity). Each finding below says what happened on
// the wire and why it is the peer's; the traces FRAY_THIRDPARTY_TRACES
// keeps hold the evidence.
//
// None of these servers primes the standalone GET stream, and none ends
// it on its own: server.priming-event-get, which holds only a GET stream
// the server closes without having sent an id, never shows (see
// sdkExpectation).
func thirdPartyExpectation(pair, profile string) expectation {
	var e expectation
	switch pair + "/" + cmp.Or(profile, "none") {
	// server-everything 2026.8.31 keeps its events in an event store of its
	// own (dist/transports/streamableHttp.js) whose replayEventsAfter walks
	// every event of the session after Last-Event-ID, whatever its stream,
	// and returns the id of the last event it replayed (or Last-Event-ID
	// itself) where the SDK expects the stream's id. The SDK's transport
	// registers the resumed connection under that return value, so the
	// call's later progress and its response, stored under the call's own
	// stream id, are written to no connection: the resumed stream carries
	// the replay, then only ": keepalive" comments every 15 s, and the
	// call is never answered. (The SDK's example store,
	// inMemoryEventStore.ts, filters by stream and returns the stream id;
	// modelcontextprotocol/servers#4087 is the replay-every-stream half.)
	case "ts←server-everything/polling-server":
		// The call's stream is cut after its priming event; 150 ms into the
		// call the client lists the tools (a second stream: its priming
		// event and response are stored after the call's priming id); the
		// client resumes 0.5-1 s later from the call's priming id and gets
		// the tools/list stream's priming event (as "data: {}") and
		// response, then the call's first progress, then nothing.
		// "The server MUST NOT replay messages that would have been
		// delivered on a different stream": server.replay-isolated. The
		// id reuse (event-ids-unique) and the second tools/list response
		// (no-message-duplicated) are that same replay: one cause, one
		// failure. The call is never answered ("the Server MUST reply with
		// a Response"; nothing for 10 s while the client still waited):
		// e2e.every-request-answered.
		e.findings = []string{"server.replay-isolated:fail", "e2e.every-request-answered:fail"}
		e.clientFails = "after the resumption the call's live events reach no stream; the client times out"
	case "ts←server-everything/lossy-resume":
		// Progress 2-4 are lost in flight and the call's stream closed; the
		// client resumes from progress 1's id while the call still runs,
		// gets what was stored by then replayed (progress 2-6), then
		// nothing but keep-alives: progress 7-8 and the response are
		// stored and written nowhere, and the call is never answered. The
		// lose acts on every stream until it first acts, so when the
		// tools/list stream starts before the call's loss its events are
		// stored after the resumption point and replayed with the call's:
		// server.replay-isolated, as under polling-server.
		e.findings = []string{"e2e.every-request-answered:fail"}
		e.maybe = []string{"server.replay-isolated:fail"}
		e.clientFails = "after the resumption the call's live events reach no stream; the client times out"

	// flaky-gateway answers the first resumption 503 (it acts on its
	// first opportunity), and at its seed the next one too. mcp-remote
	// 0.15.1 waits Retry-After, then gives up after those two refused
	// reconnections and times out. fray refused both, so it blames neither
	// end (client.reconnects excuses giving up after two refusals by
	// fray); the verdict fails on the client alone.
	case "mcp-remote←ts-server/flaky-gateway":
		e.clientFails = "two reconnections refused by fray in a row: mcp-remote gives up"

	// mcp-go v1.2.1 with server.WithEventStore: every SSE event has an id,
	// but no stream starts with a priming event ("SHOULD immediately send
	// an SSE event consisting of an event ID and an empty data field"):
	// a warning, an error only where a profile says so. With an event
	// store, the session's notification channel is drained both by the
	// POST handler's forwarder and by the standalone GET stream's pump
	// (server/streamable_http.go, streamable_http_resume.go), so a call's
	// progress goes to whichever reads first: the POST's stream or the GET
	// stream (in the traces, progress 1, 3, 5 on the GET and 2, 4, 6 on
	// the POST). "These messages SHOULD be unrelated to any concurrently-running JSON-RPC
	// request": server.messages-on-own-stream, a warning.
	case "ts←mcp-go/none", "go-sdk←mcp-go/none":
		e.findings = []string{"server.priming-event:warn", checks.ServerMessagesOnOwnStream + ":warn"}
	case "ts←mcp-go/lossy-resume":
		// The call's POST stream is cut mid-call. mcp-go runs the tool
		// with a context derived from the POST's request, so the cut
		// cancels it; the resumed stream replays the lost progress and the
		// JSON-RPC error "slow-count: step N: context canceled".
		// "Disconnection SHOULD NOT be interpreted as the client cancelling
		// its request": server.disconnect-not-cancel, a warning.
		e.findings = []string{"server.priming-event:warn", checks.ServerDisconnectNotCancel + ":warn", checks.ServerMessagesOnOwnStream + ":warn"}
		e.clientFails = "mcp-go cancels the call when its POST connection drops; the resumed call ends in context canceled"

	// supergateway 4.0.0 (--stateful) runs the SDK's transport without an
	// event store: no ids, so no priming event (a warning), and nothing a
	// client could resume. Under lossy-resume the call's stream loses its
	// events and closes; no conforming pair could recover that, so fray
	// blames neither end, and the TypeScript client, holding no id, waits
	// for a response that cannot come (typescript-sdk#2739).
	case "ts←supergateway/none":
		e.findings = []string{"server.priming-event:warn"}
	case "ts←supergateway/lossy-resume":
		e.findings = []string{"server.priming-event:warn"}
		e.clientFails = "no event ids: a cut stream cannot be resumed"

	// tmcp 1.20.0 with @tmcp/transport-http 0.9.0 negotiates 2025-06-18
	// and sends no event ids: nothing is owed a priming event, nothing can
	// be resumed, and a lost stream loses the call with nobody to blame.
	case "ts←tmcp/lossy-resume", "go-sdk←tmcp/lossy-resume":
		e.clientFails = "no event ids: a cut stream cannot be resumed"

	// mcp-go v1.2.1's client resumes a stream the server ended cleanly
	// (client/transport/streamable_http.go: "Streams that break off are
	// not resumed"). flaky-gateway resets the tools/list stream right
	// after its priming event (id and retry: 100 delivered); the client
	// fails the request ("unexpected nil response") and DELETEs the
	// session 1 ms later. "If the client wishes to resume after a
	// disconnection (whether due to network failure or server-initiated
	// closure), it SHOULD issue an HTTP GET ... with Last-Event-ID":
	// client.reconnects, a warning. The request is left unanswered ("the
	// Server MUST reply with a Response": the server did, on the cut
	// stream, and the client never came back for it), which fails
	// e2e.every-request-answered citing client.reconnects; the response
	// lost with the stream is e2e.no-message-lost's warning. The DELETE is
	// the client giving up, not a reason to excuse it.
	case "mcp-go←ts-server/flaky-gateway":
		e.findings = []string{"client.reconnects:warn", "e2e.every-request-answered:fail", "e2e.no-message-lost:warn"}
		e.clientFails = "mcp-go does not resume a stream that broke off; the request fails"
	}
	return e
}

// verdictGap is what fray's verifier says today where it differs from the
// correct verdict, and why.
type verdictGap struct {
	today []string
	why   string
}

// thirdPartyGaps are the pairs and profiles where fray's verdict today is
// not the correct one (thirdPartyExpectation), keyed "pair/profile".
var thirdPartyGaps = map[string]verdictGap{}
