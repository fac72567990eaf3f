package scripted_test

import (
	"testing"

	"github.com/frayproxy/fray/examples/scripted"
	"github.com/frayproxy/fray/proxy/checks"
)

// unknownRevision is a revision no server implements, later than
// 2026-07-28 so that fray judges its requests by that revision's rules.
const unknownRevision = "2099-01-01"

// TestVersionRefusalIsClean: a correct 2026-07-28 server refuses every
// request of a revision it does not implement with 400 and
// UnsupportedProtocolVersionError; fray judges each refusal
// (server.unsupported-version-error) and finds nothing, though no call
// succeeds.
func TestVersionRefusalIsClean(t *testing.T) {
	rep, res, err := statelessRun{client: scripted.StatelessClientOptions{Version: unknownRevision, NoListen: true}}.run(t)
	if err != nil || res.Failed != 4 || res.Completed != 0 {
		t.Errorf("the client's calls: %+v (%v), want 4 refused", res, err)
	}
	if got := found(rep); len(got) > 0 {
		t.Errorf("found %v\n%s", got, describe(rep))
	}
	if n := applied(rep, checks.ServerUnsupportedVersion); n != 4 {
		t.Errorf("%s judged %d refusals, want 4\n%s", checks.ServerUnsupportedVersion, n, describe(rep))
	}
}
