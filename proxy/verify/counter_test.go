package verify

import (
	"strings"
	"testing"

	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
)

func TestSplitCounter(t *testing.T) {
	for _, tc := range []struct {
		id, prefix string
		n          uint64
		ok         bool
	}{
		{"3", "", 3, true},
		{"ABC_12", "ABC_", 12, true},
		{"0-0", "0-", 0, true},
		{"abc", "", 0, false},
		{"", "", 0, false},
		{"x1234567890123456789", "x1", 234567890123456789, true},
		{"12345678901234567890", "12", 345678901234567890, true},
		{"ev:/007", "ev:/", 7, true},
		{"9a", "", 0, false},
	} {
		p, n, ok := splitCounter([]byte(tc.id))
		if string(p) != tc.prefix || n != tc.n || ok != tc.ok {
			t.Errorf("splitCounter(%q) = %q, %d, %v; want %q, %d, %v", tc.id, p, n, ok, tc.prefix, tc.n, tc.ok)
		}
	}
}

// polled plays a polling server's call: the POST stream primed with id
// first, closed by the server; then the client's resumption from it,
// whose events carry ids.
func polled(t *testing.T, first string, resumed ...string) report.Report {
	tl := initialized(t)
	tl.call("s1", 1, "tools/call").stream200().send(primeRetry(first, 100)).end(observe.Complete)
	tl.wait(200 * ms)
	g := tl.get("s1", first).stream200()
	for i, id := range resumed {
		if i == len(resumed)-1 {
			g.send(resp(id, 1))
		} else {
			g.send(note(id))
		}
	}
	g.end(observe.Complete)
	return tl.final()
}

func TestInferredReplayGap(t *testing.T) {
	for _, tc := range []struct {
		name    string
		first   string   // the id the POST stream primed with
		resumed []string // the ids of its resumption's events
		want    want
	}{
		{"a replay that goes on from the next number passes", "s_0", []string{"s_1", "s_2", "s_3"}, is(checks.ServerReplayComplete, report.StatusPass, 0)},
		{"a replay that skips numbers fray never saw is found, marked inferred", "s_0", []string{"s_3", "s_4", "s_5"},
			isWith(checks.ServerReplayComplete, report.StatusWarn, 1, func(e report.Evidence) bool {
				return !e.Inferred || !strings.Contains(e.Message, "skipping 2 event(s)") ||
					strings.Join(e.EventIDs, " ") != "s_0 s_3 s_1 s_2"
			})},
		{"ids that jump within a connection infer nothing", "s_0", []string{"s_3", "s_5", "s_9"}, all(is(checks.ServerReplayComplete, report.StatusPass, 0),
			excuses(checks.ServerReplayComplete, "the ids do not count by one: nothing inferred of events fray never saw"))},
		{"ids that are not counters infer nothing", "p-a", []string{"p-c", "p-d", "p-e"}, is(checks.ServerReplayComplete, report.StatusPass, 0)},
		{"another prefix infers nothing", "a_0", []string{"b_5", "b_6", "b_7"}, is(checks.ServerReplayComplete, report.StatusPass, 0)},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.want(t, polled(t, tc.first, tc.resumed...)) })
	}
	t.Run("a profile that makes the check an error fails it", func(t *testing.T) {
		tl := initializedWith(t, Options{Severity: map[string]checks.Severity{checks.ServerReplayComplete: checks.Error}})
		tl.call("s1", 1, "tools/call").stream200().send(primeRetry("7", 100)).end(observe.Complete)
		tl.wait(200 * ms)
		tl.get("s1", "7").stream200().send(note("9")).send(note("10")).send(resp("11", 1)).end(observe.Complete)
		expect(t, tl.final(), checks.ServerReplayComplete, report.StatusFail, 1)
	})
}
