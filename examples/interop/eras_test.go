package interop_test

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/examples/mcpgo/mcpgopeer"
	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/report"
)

// eraPair is a client and a server of the SDKs that serve both revisions,
// the client asking for one era. Its name is client←server@era.
type eraPair struct {
	name   string
	start  startServer
	client runClientFor
	// profiles are the built-in profiles the pair runs under besides none.
	profiles []string
	// goOnly: neither peer needs Node.js.
	goOnly bool
	// directFails, when set, says why the client fails against the server
	// directly, without fray: the pair does not interoperate at all.
	directFails string
}

// streamableProfiles are the built-in profiles for Streamable HTTP: every
// one but legacy-sse (the 2024-11-05 transport) and soak (hours long).
func streamableProfiles() []string {
	return slices.DeleteFunc(profiles.Names(), func(n string) bool { return n == "legacy-sse" || n == "soak" })
}

// eraPairs is every pair: each SDK's own pair in both eras, under every
// Streamable HTTP profile; then the cross-era pairs and the cross-SDK
// 2026-07-28 pairs under the profiles that tell something about them: an
// old (2025-11-25-only) client against a server of both eras under
// mobile-network (nothing else can fire on a server without event ids, and
// what a cut does to such a client the SDK pairs at 2025-11-25 show); a
// client of both eras against an old server under the profiles that cut
// resumable streams (not stateless-cut: these pairs speak 2025-11-25 once
// the server has declined 2026-07-28, and cut-fin and cut-rst make the
// same cut as a poll there; mcp-go, which never gets to call that server,
// only under two); new clients against other SDKs' new servers under
// mobile-network, lossy-resume and stateless-cut (does the client re-issue
// a cut call) and buffering-proxy.
func eraPairs() []eraPair {
	all := streamableProfiles()
	oldClient := []string{"mobile-network"}
	oldServer := []string{"polling-server", "lossy-resume", "cut-fin", "cut-rst", "gateway-errors", "buffering-proxy"}
	crossSDK := []string{"mobile-network", "lossy-resume", "stateless-cut", "buffering-proxy"}
	return []eraPair{
		{name: "ts2←ts2-server@" + era2026, start: startTSModern, client: tsModernClient(era2026, true), profiles: all},
		{name: "ts2←ts2-server@" + era2025, start: startTSModern, client: tsModernClient(era2025, false), profiles: all},
		{name: "go-sdk←go-sdk-stateless@" + era2026, start: startGoStateless, client: goSDKEraClient(era2026), profiles: all, goOnly: true},
		{name: "go-sdk←go-sdk-stateless@" + era2025, start: startGoStateless, client: goSDKEraClient(era2025), profiles: all, goOnly: true},
		{name: "mcp-go←mcp-go@" + era2026, start: startMCPGo(mcpgopeer.Streamable), client: mcpGoEraClient(era2026), profiles: all, goOnly: true},
		{name: "mcp-go←mcp-go@" + era2025, start: startMCPGo(mcpgopeer.Streamable), client: mcpGoEraClient(era2025), profiles: all, goOnly: true},

		// An old client, a new server.
		{name: "ts1←ts2-server@" + era2025, start: startTSModern, client: withNodeSlot(tsThirdParty(callEra, "streamable", "")), profiles: oldClient},
		{name: "ts1←go-sdk-stateless@" + era2025, start: startGoStateless, client: withNodeSlot(tsThirdParty(callEra, "streamable", "")), profiles: oldClient},
		// A new client, an old server: each falls back to initialize.
		{name: "ts2←ts1-server@" + eraAuto, start: startTSStreamableThird, client: tsModernClient(eraAuto, false), profiles: oldServer},
		{name: "go-sdk←go-sdk-server@" + eraAuto, start: startGoStreamable, client: goSDKEraClient(era2026), profiles: oldServer, goOnly: true},
		{name: "ts2←go-sdk-server@" + eraAuto, start: startGoStreamable, client: tsModernClient(eraAuto, false), profiles: oldServer},
		{name: "mcp-go←go-sdk-server@" + eraAuto, start: startGoStreamable, client: mcpGoEraClient(era2026), profiles: []string{"polling-server", "lossy-resume"}, goOnly: true,
			directFails: "the Go SDK's stateful handler answers server/discover at 2026-07-28 though it does not serve that revision, and mcp-go takes the answer as the revision agreed"},
		// New clients, new servers, across SDKs.
		{name: "ts2←go-sdk-stateless@" + era2026, start: startGoStateless, client: tsModernClient(era2026, false), profiles: crossSDK},
		{name: "go-sdk←ts2-server@" + era2026, start: startTSModern, client: goSDKEraClient(era2026), profiles: crossSDK},
		{name: "mcp-go←ts2-server@" + era2026, start: startTSModern, client: mcpGoEraClient(era2026), profiles: crossSDK},

		// The Go SDK's stateless handler serving 2025-11-25, its tool closing
		// the call's stream after step 3 as SEP-1699 polling does.
		{name: "go-sdk←go-sdk-stateless-closing@" + era2025, start: startGoStateless, client: goSDKEraClientClosing(era2025, 3), goOnly: true,
			directFails: "the stateless handler closes the call's stream with no event id to resume from"},
	}
}

// Time limits. A call ends in a quarter of a second; a client that waits
// for an answer that cannot come (the expectation says why) costs its
// timeout, so it is short, yet long enough for a Node client to start on
// a loaded machine.
const (
	eraClientTimeout = 10 * time.Second
	eraPairTimeout   = 60 * time.Second
)

// TestEraPairs runs every era pair directly, then through fray with no
// profile and under its profiles, all runs of a pair at once against one
// server, and holds each outcome to eraExpectation: the verdict, why it is
// not a pass, the findings and the client's fate.
//
// FRAY_ERAS_TRACES=DIR keeps each run's trace (PAIR__PROFILE.jsonl) and
// outcome (PAIR__PROFILE.json) in DIR.
func TestEraPairs(t *testing.T) {
	if testing.Short() {
		t.Skip("era pairs run real peers for about a minute; not in -short")
	}
	keep := os.Getenv("FRAY_ERAS_TRACES")
	for _, pr := range eraPairs() {
		t.Run(pr.name, func(t *testing.T) {
			t.Parallel()
			if !pr.goOnly {
				requireNode(t)
			}
			ctx, cancel := context.WithTimeout(context.Background(), eraPairTimeout)
			defer cancel()
			direct, outcomes := runPair(ctx, t, pr.name, pr.start, false, pr.profiles, func(profile string) *uint64 { return eraSeed(pr.name, profile) },
				pr.client, eraClientTimeout, keep)
			switch {
			case !direct.OK && pr.directFails == "":
				t.Fatalf("client failed against the server directly: %s", direct.Error)
			case direct.OK && pr.directFails != "":
				t.Errorf("client succeeded against the server directly; expected to fail: %s", pr.directFails)
			case !direct.OK:
				t.Logf("direct: the client fails as expected (%s): %s", pr.directFails, direct.Error)
			}
			for _, o := range outcomes {
				checkEra(t, pr.name, o)
			}
		})
	}
}

// checkEra holds one outcome to eraExpectation: the verdict, why it is
// not a pass, the findings and the client's fate, and whether the
// profile's faults fired.
func checkEra(t *testing.T, pair string, o frayOutcome) {
	t.Helper()
	name := cmp.Or(o.Profile, "none")
	if o.Err != "" {
		t.Errorf("%s: fray run: %s", name, o.Err)
		return
	}
	got := eraOutcome{verdict: o.Report.Verdict, why: o.Report.Why, findings: findings(o.Report), clientOK: o.Client.OK}
	want := eraExpectation(pair, o.Profile)
	t.Logf("%s: client ok=%v %s; verdict %s (%s); findings %v; excused %v; faults %v",
		name, o.Client.OK, o.Client.Error, got.verdict, got.why, got.findings, excuses(o.Report), faultCounts(o.Report))
	if o.Profile == "" && !o.Client.OK && want.clientFails == "" {
		t.Errorf("none: the client failed through fray with no fault: %s (fray must be transparent)", o.Client.Error)
	}
	if fired := len(o.Report.Faults) > 0; o.Profile != "" && fired != want.faultsFire {
		t.Errorf("%s: faults fired: %v (%v); the expectation says %v", name, fired, faultCounts(o.Report), want.faultsFire)
	}
	if slices.Contains(want.findings, failReissue) {
		checkReissueEvidence(t, name, o.Report)
	}
	if pair == "mcp-go←go-sdk-server@"+eraAuto {
		// The Go SDK's refusal of tools/list at 2026-07-28 was judged, and
		// it is the 400 the text asks for.
		for _, c := range o.Report.Checks {
			if c.ID == checks.ServerUnsupportedVersion && (c.Status != report.StatusPass || c.Applied == 0) {
				t.Errorf("%s: %s %s, applied %d; want the refusal judged and passed", name, c.ID, c.Status, c.Applied)
			}
		}
	}
	if msg := want.mismatch(got); msg != "" {
		t.Errorf("%s: %s\n%s", name, msg, evidence(o.Report))
	}
}

// checkReissueEvidence holds the evidence of client.reissues-cut-request
// to the cut fray made: each finding names the tools/call request the
// client did not send again and fray's fault that cut it; and the server,
// watched after the cut, sent nothing more for the call
// (server.silent-after-cancel judged it and passed).
func checkReissueEvidence(t *testing.T, name string, rep report.Report) {
	t.Helper()
	for _, c := range rep.Checks {
		if c.ID == checks.ServerSilentAfterCancel && (c.Status != report.StatusPass || c.Applied == 0) {
			t.Errorf("%s: %s %s, applied %d; want a pass that judged the cut call", name, c.ID, c.Status, c.Applied)
		}
		if c.ID != checks.ClientReissuesCutRequest {
			continue
		}
		if len(c.Evidence) == 0 {
			t.Errorf("%s: %s failed without evidence", name, c.ID)
		}
		for _, ev := range c.Evidence {
			if ev.Fault == nil || !strings.Contains(ev.Message, "(tools/call)") || !strings.Contains(ev.Message, "did not re-issue") {
				t.Errorf("%s: %s evidence %q (fault %v): want the tools/call not re-issued and fray's cut", name, c.ID, ev.Message, ev.Fault)
			}
		}
	}
}

// eraOutcome is what a run through fray came to.
type eraOutcome struct {
	verdict  string
	why      string
	findings []string
	clientOK bool
}

// eraExpect is the outcome a pair deserves under a profile.
type eraExpect struct {
	// verdict is report.VerdictPass, VerdictFail or VerdictInconclusive.
	verdict string
	// why is part of the report's Why ("" for a pass).
	why string
	// findings are "check:status" for each failed or warned check, in
	// catalog order; maybe those that may show or not with the peers'
	// timing.
	findings, maybe []string
	// clientFails, when set, says why the client fails.
	clientFails string
	// faultsFire says whether the profile's faults fire.
	faultsFire bool
}

// mismatch says how got differs from e, "" when it does not.
func (e eraExpect) mismatch(got eraOutcome) string {
	var out []string
	if got.verdict != e.verdict {
		out = append(out, "verdict "+got.verdict+", want "+e.verdict)
	}
	if !strings.Contains(got.why, e.why) || e.why == "" && got.why != "" {
		out = append(out, fmt.Sprintf("why %q, want %q", got.why, e.why))
	}
	if !sameFindings(sorted(got.findings), expectation{findings: sorted(e.findings), maybe: e.maybe}) {
		out = append(out, "findings "+strings.Join(got.findings, ",")+", want "+strings.Join(e.findings, ",")+" (and maybe "+strings.Join(e.maybe, ",")+")")
	}
	if got.clientOK != (e.clientFails == "") {
		if got.clientOK {
			out = append(out, "the client succeeded, expected to fail: "+e.clientFails)
		} else {
			out = append(out, "the client failed")
		}
	}
	return strings.Join(out, "; ")
}

// faultCounts lists "kind xN" for every fault that fired.
func faultCounts(rep report.Report) []string {
	var out []string
	for _, f := range rep.Faults {
		out = append(out, fmt.Sprintf("%s x%d", f.Kind, f.Count))
	}
	return out
}

// eraSeed is the seed a profile runs with for a pair, nil for the
// profile's own. lossy-resume cuts half the POST streams, chosen by the
// seed; these seeds have it cut the tools/call stream of every pair (the
// TypeScript v2 client at 2026-07-28 opens its streams in another order),
// so that each pair shows what a cut call does in its era. stateless-cut
// closes half the tools/call streams after their first event: seed 1
// closes the call of every Go client at 2026-07-28 (and of the Go SDK's
// at 2025-11-25), seed 2 that of the TypeScript v2 client at 2026-07-28.
func eraSeed(pair, profile string) *uint64 {
	if profile == "stateless-cut" {
		if strings.HasPrefix(pair, "ts2←") {
			return ptr(uint64(2))
		}
		return ptr(uint64(1))
	}
	if profile != "lossy-resume" {
		return nil
	}
	switch {
	case strings.HasPrefix(pair, "ts2←") && strings.HasSuffix(pair, "@"+era2026):
		return ptr(uint64(3))
	case pair == "go-sdk←go-sdk-server@"+eraAuto:
		return ptr(uint64(8))
	}
	return ptr(uint64(6))
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
