package verify

import (
	"testing"

	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
)

// TestHappyPathPassesEveryAppliedCheck: a session whose streams are
// primed, whose answers all arrive, and which nothing disturbs, passes.
func TestHappyPathPassesEveryAppliedCheck(t *testing.T) {
	tl := newTimeline(t, Options{Profile: "none", Seed: 7})
	tl.initialize("s1")
	tl.wait(5 * ms)
	tl.notify("s1", `{"jsonrpc":"2.0","method":"notifications/initialized"}`).respond(202, false, "").end(observe.Complete)
	tl.toolCall("s1", 1, "a1", "a2", "a3")
	tl.wait(10 * ms)
	tl.toolCall("s1", 2, "b1", "b2", "b3")
	tl.call("s1", 3, "tools/list").jsonAnswer("3")
	r := tl.final()
	if r.Verdict != report.VerdictPass {
		t.Errorf("verdict %s, want pass: %+v", r.Verdict, r.Checks)
	}
	if r.Profile != "none" || r.Seed != 7 || r.Schema != report.SchemaVersion {
		t.Errorf("header %+v", r)
	}
	for _, c := range r.Checks {
		if c.Count != 0 {
			t.Errorf("%s: %d findings: %+v", c.ID, c.Count, c.Evidence)
		}
	}
	expect(t, r, checks.ServerPrimingEvent, report.StatusPass, 0)
	expect(t, r, checks.ServerEventIDsUnique, report.StatusPass, 0)
	expect(t, r, checks.E2EEveryRequestAnswered, report.StatusPass, 0)
	expect(t, r, checks.E2ENoMessageLost, report.StatusPass, 0)
	expect(t, r, checks.E2ENoMessageDuplicated, report.StatusPass, 0)
	expect(t, r, checks.ClientReconnects, report.StatusSkip, 0)
	if a := check(t, r, checks.E2EEveryRequestAnswered).Applied; a != 4 {
		t.Errorf("every-request-answered applied %d times, want 4", a)
	}
	if r.Totals.Sessions != 1 || r.Totals.Streams != 2 || r.Totals.Events != 6 || r.Totals.Exchanges != 5 {
		t.Errorf("totals %+v", r.Totals)
	}
	if len(r.Checks) != len(checks.Catalog()) {
		t.Errorf("%d checks, want %d", len(r.Checks), len(checks.Catalog()))
	}
	for i, c := range checks.Catalog() {
		if r.Checks[i].ID != c.ID {
			t.Errorf("check %d is %s, want %s", i, r.Checks[i].ID, c.ID)
		}
	}
}
