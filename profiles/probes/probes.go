// Package probes is the catalog of known reconnection bugs of MCP
// implementations, each as a probe: the public report it comes from, the
// end it probes, the fault profile that sets its trigger up, and the check
// whose finding names the bug. Running a probe is running fray with its
// profile (fray run --probe); Judge reads the report of such a run and
// says whether the bug showed, the peer survived, or the run could not
// tell.
//
// The catalog is read-only and safe for concurrent use.
package probes

import (
	"bytes"
	"embed"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy/checks"
)

//go:embed profiles/*.toml
var profileFS embed.FS

// The ends a probe can probe.
const (
	// Client: the client under test meets the faults; the server is a
	// known-good one.
	Client = "client"
	// Server: the server under test meets the faults; the client is a
	// known-good one.
	Server = "server"
)

// Probe is one known bug, ready to be provoked. The zero value is no
// probe.
type Probe struct {
	// Name is the probe's name in `fray run --probe NAME`.
	Name string
	// Issue is the URL of the public report the bug comes from; Related
	// lists reports of the same bug in other implementations.
	Issue   string
	Related []string
	// Revision is the protocol revision (or range) the bug applies to.
	Revision string
	// End is Client or Server: the end whose bug the probe provokes.
	End string
	// Finding is the id of the check (package checks) whose finding
	// names the bug.
	Finding string
	// Bug says in one sentence what the buggy peer does under the
	// trigger.
	Bug string
	// Trigger lists the fault kinds that must fire for the trigger to be
	// met; nil means every kind of the profile. A kind that only removes
	// what a peer may not send (strip-retry) sets the scene without being
	// part of the trigger.
	Trigger []string
	// Needs says what the peers must do for the probe to judge anything,
	// beyond what every probe needs (a session, a tool call answered on
	// an SSE stream, resumable streams); "" when nothing more.
	Needs string
	// Judged: the peer survives only when the finding's check judged at
	// least one case and excused none; otherwise the run is inconclusive
	// (the peers did not do what Needs says, or the case the probe is
	// about may be the one the check could not judge).
	Judged bool
	// Sessions is the number of sessions the run must have held for the
	// peer to survive; 0 means any.
	Sessions int
	// FoundIn names the released versions the probe was run on and found
	// the bug in; "" when it was run on none that has it.
	FoundIn string
	// Timeout bounds each run of the client command under the probe
	// (`fray run --probe`, unless --client-timeout is given); 0 means
	// DefaultTimeout.
	Timeout time.Duration
}

// DefaultTimeout bounds a probe's run of the client command when the probe
// sets no Timeout of its own: long enough for the official SDKs' clients
// to back off through a probe's four or five failures (1 s growing by
// 1.5 is 8 s for four), short enough that the probes of one end, each
// hanging on its bug, still end within four minutes (TestTimeoutsFitAJob).
const DefaultTimeout = 15 * time.Second

// ClientTimeout is the bound of each run of the client command under p:
// its Timeout, or DefaultTimeout.
func (p Probe) ClientTimeout() time.Duration {
	if p.Timeout > 0 {
		return p.Timeout
	}
	return DefaultTimeout
}

// catalog holds every probe, in the order `fray probes list` prints them.
var catalog = []Probe{
	{Name: "resume-token-dropped", End: Client, Finding: checks.ClientLastEventID, Revision: "2025-11-25",
		Issue:   "https://github.com/modelcontextprotocol/typescript-sdk/issues/2499",
		Bug:     "a resumed stream that ends before any event with an id is reconnected without Last-Event-ID",
		FoundIn: "@modelcontextprotocol/sdk 1.32.2 (client)"},
	{Name: "transient-503-on-resume", End: Client, Finding: checks.ClientRetriesTransient, Revision: "2025-03-26 to 2025-11-25",
		Issue:   "https://github.com/modelcontextprotocol/go-sdk/issues/683",
		Bug:     "one 503 on the reconnection path ends the stream (and the session) for good",
		FoundIn: "github.com/modelcontextprotocol/go-sdk v1.8.0 (client)"},
	{Name: "gateway-502-on-resume", End: Client, Finding: checks.ClientRetriesTransient, Revision: "2025-03-26 to 2025-11-25",
		Issue:   "https://github.com/modelcontextprotocol/python-sdk/issues/1010",
		Bug:     "a 5xx after the session started is swallowed: the call waits for ever",
		FoundIn: "github.com/modelcontextprotocol/go-sdk v1.8.0 (client)"},
	{Name: "retry-line-throws", End: Client, Finding: checks.ClientReconnects, Revision: "2025-11-25",
		Issue: "https://github.com/modelcontextprotocol/java-sdk/issues/1047",
		Bug:   "the SSE parser rejects the retry field and errors the stream"},
	{Name: "retry-not-waited", End: Client, Finding: checks.ClientRetryHonoured, Revision: "2025-11-25",
		Issue: "https://github.com/modelcontextprotocol/kotlin-sdk/issues/590",
		Bug:   "the client reconnects at once, whatever retry said"},
	{Name: "no-last-event-id", End: Client, Finding: checks.ClientLastEventID, Revision: "2025-03-26 to 2025-11-25",
		Issue: "https://github.com/modelcontextprotocol/kotlin-sdk/issues/590",
		Bug:   "the reconnection GET carries no Last-Event-ID"},
	{Name: "priming-empty-data", End: Client, Finding: checks.ClientReconnects, Revision: "2025-11-25",
		Issue:   "https://github.com/modelcontextprotocol/go-sdk/issues/768",
		Related: []string{"https://github.com/modelcontextprotocol/typescript-sdk/pull/1184"},
		Bug:     "the empty data of the priming event is decoded as JSON and fails"},
	{Name: "session-404-kept", End: Client, Finding: checks.ClientNewSessionAfter404, Revision: "2025-03-26 to 2025-11-25",
		Issue:   "https://github.com/modelcontextprotocol/typescript-sdk/issues/1708",
		Related: []string{"https://github.com/modelcontextprotocol/python-sdk/issues/3556"},
		Bug:     "a 404 for the session is thrown, not answered with a new initialize; the dead id is sent again"},
	{Name: "reconnect-storm", End: Client, Finding: checks.ClientBackoff, Revision: "2025-03-26 to 2025-11-25",
		Issue:   "https://github.com/modelcontextprotocol/typescript-sdk/issues/2682",
		Related: []string{"https://github.com/modelcontextprotocol/python-sdk/issues/2393"},
		Bug:     "a stream the server keeps closing cleanly is reconnected at once, every time: the attempt counter resets and the backoff never grows",
		Trigger: []string{"close"}},
	{Name: "replay-other-streams", End: Server, Finding: checks.ServerReplayIsolated, Revision: "2025-03-26 to 2025-11-25",
		Issue:   "https://github.com/modelcontextprotocol/servers/issues/4087",
		Related: []string{"https://github.com/fiberplane/mcp-lite/issues/74"},
		Bug:     "the event store replays events of other streams after Last-Event-ID"},
	{Name: "replay-duplicate", End: Server, Finding: checks.ServerReplayNoDuplicates, Revision: "2025-03-26 to 2025-11-25",
		Issue:   "https://github.com/modelcontextprotocol/typescript-sdk/pull/2335",
		Related: []string{"https://github.com/modelcontextprotocol/typescript-sdk/pull/2547"},
		Bug:     "a resumption delivers an event the client already had (replay racing a live write)"},
	{Name: "standalone-replay-empty", End: Server, Finding: checks.ServerReplayComplete, Revision: "2025-03-26 to 2025-11-25",
		Issue:   "https://github.com/modelcontextprotocol/typescript-sdk/issues/943",
		Related: []string{"https://github.com/modelcontextprotocol/typescript-sdk/issues/2560"},
		Bug:     "a resumption of the standalone GET stream replays nothing: the event store cannot find that stream from its event ids",
		Needs:   "the server sends notifications on the standalone GET stream while the client's calls run, and the client opens that stream and resumes it",
		Judged:  true,
		FoundIn: "@modelcontextprotocol/sdk 1.32.2 (the example event store it ships)"},
	{Name: "replay-other-sessions", End: Server, Finding: checks.ServerReplayIsolated, Revision: "2025-03-26 to 2025-11-25",
		Issue:    "https://github.com/PrefectHQ/fastmcp/pull/4402",
		Bug:      "an event store shared by the sessions and keyed by stream id replays another session's events",
		Needs:    "the client command runs two sessions at once, each making tool calls",
		Sessions: 2},
	{Name: "cut-call-left-pending", End: Client, Finding: checks.ClientReissuesCutRequest, Revision: "2026-07-28",
		Issue:   "https://github.com/modelcontextprotocol/typescript-sdk/issues/2739",
		Bug:     "a call whose answer stream ends before its response is never sent again: it waits for its timeout, or fails",
		Needs:   "the client speaks 2026-07-28",
		Judged:  true,
		FoundIn: "@modelcontextprotocol/client 2.4.0; github.com/modelcontextprotocol/go-sdk v1.8.0 (client at 2026-07-28)"},
	{Name: "standalone-reconnect-storm", End: Client, Finding: checks.ClientBackoff, Revision: "2025-03-26 to 2025-11-25",
		Issue:   "https://github.com/modelcontextprotocol/python-sdk/issues/3356",
		Related: []string{"https://github.com/modelcontextprotocol/python-sdk/issues/3257"},
		Bug:     "each clean close of the standalone GET stream resets the attempt counter: the client reconnects to a server that keeps closing it in a tight loop, with no backoff",
		Trigger: []string{"idle-close", "close"},
		Needs:   "the client opens the standalone GET stream and resumes it when it is cut",
		Judged:  true},
	{Name: "standalone-resumed-with-post-id", End: Client, Finding: checks.ClientLastEventID, Revision: "2025-03-26 to 2025-11-25",
		Issue:  "https://github.com/modelcontextprotocol/swift-sdk/issues/281",
		Bug:    "one last event id is kept for all the client's streams: the standalone GET stream is resumed with the id of a POST answer stream, and gets nothing",
		Needs:  "the client opens the standalone GET stream, opens it again when it is cut, and makes a second tool call",
		Judged: true},
	{Name: "cancelled-still-answered", End: Server, Finding: checks.ServerSilentAfterCancel, Revision: "2026-07-28",
		Issue: "https://github.com/modelcontextprotocol/go-sdk/issues/1093",
		Related: []string{"https://github.com/modelcontextprotocol/go-sdk/issues/1259",
			"https://github.com/modelcontextprotocol/go-sdk/issues/1235"},
		Bug:    "a request cancelled by its closed stream is still worked on and answered, and what the work sends goes out on another stream",
		Needs:  "the client speaks 2026-07-28 and keeps a subscriptions/listen stream open while its calls run",
		Judged: true},
	{Name: "bad-message-kills-session", End: Server, Finding: checks.ServerSessionSurvivesRefusal, Revision: "2024-11-05",
		Issue:  "https://github.com/supercorp-ai/supergateway/issues/190",
		Bug:    "one message the server refuses (too large, not JSON, the wrong Content-Type) takes the session's message channel down: every later POST of the session is answered 503 while its SSE stream stays open",
		Needs:  "the client POSTs another message in the session after one is refused (it sends a failed call again, or makes more calls)",
		Judged: true},
	{Name: "get-reopen-refused", End: Server, Finding: checks.ServerGetStreamOr405, Revision: "2025-03-26 to 2025-11-25",
		Issue:  "https://github.com/render-oss/render-mcp-server/issues/26",
		Bug:    "a standalone GET stream opened again after the old one was cut is refused with 400 (\"session already exists\") while the server still holds the old one",
		Needs:  "the client keeps its standalone GET stream open 300 ms or more, and opens it again when it is cut",
		Judged: true,
		// Stripping the ids sets the scene on a server that sends events
		// on its standalone stream; one that sends none needs no help.
		Trigger: []string{"close"}},
	{Name: "guessed-last-event-id", End: Server, Finding: checks.ServerReplayIsolated, Revision: "2025-03-26 to 2025-11-25",
		Issue:    "https://github.com/agentfront/frontmcp/pull/529",
		Related:  []string{"https://github.com/modelcontextprotocol/typescript-sdk/pull/2109"},
		Bug:      "an event store that looks a Last-Event-ID up across every session, with no check that the id is the session's own, replays another session's stream to a client that guesses one of its ids",
		Needs:    "the client command runs two sessions at once, each opening the standalone GET stream and resuming it when it is cut, and the server sends events on that stream and ends no call's stream before its response (the first resumption in a session takes the guessed id)",
		Sessions: 2},
	{Name: "resume-empty-loop", End: Client, Finding: checks.ClientResumeLoop, Revision: "2025-11-25",
		Issue:   "https://github.com/modelcontextprotocol/rust-sdk/issues/958",
		Related: []string{"https://github.com/cline/cline/issues/12119"},
		Bug:     "a resumption answered 200 with a stream that ends at once is taken for a reconnection that worked: the attempt counter starts again, and the client resumes from the same Last-Event-ID at the pace of retry, for as long as the answer stays empty"},
	{Name: "get-405-on-reconnect", End: Client, Finding: checks.ClientSurvivesGetFailure, Revision: "2025-03-26 to 2025-11-25",
		Issue:   "https://github.com/modelcontextprotocol/go-sdk/issues/1175",
		Bug:     "a 405 to a reconnection of the standalone GET stream is taken for the failure of the whole connection: the calls in flight on their healthy POST streams are given up with it",
		Needs:   "the client keeps its standalone GET stream open 300 ms or more, and opens it again when it is cut while a call is in flight",
		Judged:  true,
		Trigger: []string{"close", "status"},
		FoundIn: "github.com/modelcontextprotocol/go-sdk v1.8.0 (client)"},
	{Name: "standalone-retries-tear-down", End: Client, Finding: checks.ClientSurvivesGetFailure, Revision: "2025-03-26 to 2025-11-25",
		Issue:   "https://github.com/modelcontextprotocol/go-sdk/issues/1175",
		Bug:     "a standalone stream whose events carry no ids counts as making no progress: once the client's retries of it run out, it fails the whole connection, the calls in flight on their healthy POST streams included",
		Needs:   "the client reconnects its standalone GET stream when it is cut (each 200 ms after it began) and gives it up after a few attempts, while a call is in flight",
		Judged:  true,
		Trigger: []string{"close"}},
	{Name: "failed-resume-empty", End: Server, Finding: checks.ServerReplayComplete, Revision: "2025-11-25",
		Issue: "https://github.com/modelcontextprotocol/rust-sdk/issues/958",
		Bug:   "a resumption the server cannot replay (the stream's channel gone once its call was done) is answered 200 with a stream that ends at once: the result is never sent again, and a client that resumes from the same id meets the same empty answer for ever"},
}

// All returns every probe in catalog order. The slice is a fresh copy.
func All() []Probe {
	out := make([]Probe, len(catalog))
	for i, p := range catalog {
		out[i] = p
		out[i].Related = append([]string(nil), p.Related...)
		out[i].Trigger = append([]string(nil), p.Trigger...)
	}
	return out
}

// Names lists the probes' names in catalog order.
func Names() []string {
	out := make([]string, len(catalog))
	for i, p := range catalog {
		out[i] = p.Name
	}
	return out
}

// Lookup returns the probe called name, and whether there is one.
func Lookup(name string) (Probe, bool) {
	for _, p := range catalog {
		if p.Name == name {
			return p, true
		}
	}
	return Probe{}, false
}

// Select resolves what `--probe` names: "all", "client" or "server" (every
// probe of that end), or a comma-separated list of probe names. It fails
// on an unknown name, with a did-you-mean.
func Select(spec string) ([]Probe, error) {
	switch spec {
	case "all":
		return All(), nil
	case Client, Server:
		var out []Probe
		for _, p := range All() {
			if p.End == spec {
				out = append(out, p)
			}
		}
		return out, nil
	}
	var out []Probe
	for _, name := range strings.Split(spec, ",") {
		name = strings.TrimSpace(name)
		p, ok := Lookup(name)
		if !ok {
			return nil, fmt.Errorf("probes: no probe %q%s; give all, client, server or names from: %s",
				name, faults.DidYouMean(name, Names()), strings.Join(Names(), ", "))
		}
		out = append(out, p)
	}
	return out, nil
}

// Text returns the TOML of the probe's profile.
func (p Probe) Text() ([]byte, error) {
	b, err := profileFS.ReadFile(path.Join("profiles", p.Name+".toml"))
	if err != nil {
		return nil, fmt.Errorf("probes: %s: no profile: %w", p.Name, err)
	}
	return b, nil
}

// TriggerKinds lists the fault kinds of prof, the probe's profile, that
// must fire for the probe's trigger to be met.
func (p Probe) TriggerKinds(prof *profiles.Profile) []string {
	if p.Trigger != nil {
		return append([]string(nil), p.Trigger...)
	}
	return KindsOf(prof)
}

// Profile parses and validates the probe's fault profile, as any profile
// file is.
func (p Probe) Profile() (*profiles.Profile, error) {
	b, err := p.Text()
	if err != nil {
		return nil, err
	}
	prof, err := profiles.Parse(path.Join("probes", p.Name+".toml"), bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("probes: %s: %w", p.Name, err)
	}
	return prof, nil
}
