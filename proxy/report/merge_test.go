package report_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/report"
)

func check(id, status string, count int, evAt ...int64) report.Check {
	c := report.Check{ID: id, Severity: checks.Error, Status: status, Count: count, Applied: count + 1}
	for _, at := range evAt {
		c.Evidence = append(c.Evidence, report.Evidence{Message: fmt.Sprintf("%s at %d", id, at), AtMS: at})
	}
	return c
}

// merge is Merge of reports, failing the test on an error.
func merge(t *testing.T, reports ...report.Report) report.Report {
	t.Helper()
	m, err := report.Merge(reports...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestMergeSums(t *testing.T) {
	a := report.Report{Schema: 1, Verdict: report.VerdictPass, Profile: "soak", Seed: 7, DurationMS: 1000,
		Totals: report.Totals{Sessions: 1, Exchanges: 10, Events: 100, Faults: 3, Findings: 0},
		Checks: []report.Check{check("client.a", report.StatusPass, 0), check("server.b", report.StatusSkip, 0)},
		Faults: []report.FaultCount{{Kind: "drop", Count: 3}}}
	b := report.Report{Schema: 1, Verdict: report.VerdictPass, Profile: "soak", Seed: 8, DurationMS: 3000,
		Totals: report.Totals{Sessions: 2, Exchanges: 5, Events: 50, Faults: 4, Findings: 2},
		Checks: []report.Check{check("client.a", report.StatusWarn, 2, 10, 20), check("server.b", report.StatusPass, 0)},
		Faults: []report.FaultCount{{Kind: "close", Count: 1}, {Kind: "drop", Count: 3}}}
	m := merge(t, a, b)
	if m.Verdict != report.VerdictPass || m.Merged != 2 || m.Profile != "soak" || m.Seed != 7 || m.DurationMS != 3000 {
		t.Errorf("header %+v", m)
	}
	if want := (report.Totals{Sessions: 3, Exchanges: 15, Events: 150, Faults: 7, Findings: 2}); m.Totals != want {
		t.Errorf("totals %+v, want %+v", m.Totals, want)
	}
	if got := fmt.Sprint(m.Faults); got != "[{drop 6} {close 1}]" {
		t.Errorf("faults %s", got)
	}
	if len(m.Checks) != 2 {
		t.Fatalf("checks %+v", m.Checks)
	}
	ca, cb := m.Checks[0], m.Checks[1]
	if ca.ID != "client.a" || ca.Status != report.StatusWarn || ca.Count != 2 || ca.Applied != 4 {
		t.Errorf("client.a merged to %+v", ca)
	}
	if cb.Status != report.StatusPass {
		t.Errorf("server.b status %q, want pass (skip merged with pass)", cb.Status)
	}
	for _, e := range ca.Evidence {
		if e.Instance != 2 {
			t.Errorf("evidence %+v: instance %d, want 2", e, e.Instance)
		}
	}
}

func TestMergeFailsIfAnyFails(t *testing.T) {
	pass := report.Report{Schema: 1, Verdict: report.VerdictPass, Checks: []report.Check{check("client.a", report.StatusPass, 0)}}
	fail := report.Report{Schema: 1, Verdict: report.VerdictFail, Checks: []report.Check{check("client.a", report.StatusFail, 1, 5)}}
	for _, order := range [][]report.Report{{pass, fail}, {fail, pass}} {
		m := merge(t, order...)
		if m.Verdict != report.VerdictFail || m.Checks[0].Status != report.StatusFail {
			t.Errorf("verdict %q, status %q; want fail, fail", m.Verdict, m.Checks[0].Status)
		}
	}
}

// TestMergeInterruptedIsNoPass: a report of a run a signal stopped never
// merges into a pass.
func TestMergeInterruptedIsNoPass(t *testing.T) {
	pass := report.Report{Schema: 1, Verdict: report.VerdictPass, Checks: []report.Check{check("client.a", report.StatusPass, 0)}}
	stopped := pass
	stopped.Interrupt()
	m := merge(t, pass, stopped)
	if m.Verdict != report.VerdictInconclusive || !strings.Contains(m.Why, "report 2 (a signal stopped the run") {
		t.Errorf("verdict %q (%s), want inconclusive naming report 2", m.Verdict, m.Why)
	}
}

// TestMergeKeepsFirstEvidenceInTimeOrder: the merged evidence is the
// earliest MaxEvidence across instances, with Count still counting all.
func TestMergeKeepsFirstEvidenceInTimeOrder(t *testing.T) {
	var reps []report.Report
	var all []int64
	for i := range 3 {
		var at []int64
		for j := range report.MaxEvidence {
			v := int64(j*30 + i*7) // interleaved across instances
			at = append(at, v)
			all = append(all, v)
		}
		reps = append(reps, report.Report{Schema: 1, Verdict: report.VerdictFail,
			Checks: []report.Check{check("server.x", report.StatusFail, 25, at...)}})
	}
	m := merge(t, reps...)
	ev := m.Checks[0].Evidence
	if len(ev) != report.MaxEvidence || m.Checks[0].Count != 75 {
		t.Fatalf("%d evidences, count %d; want %d, 75", len(ev), m.Checks[0].Count, report.MaxEvidence)
	}
	// The MaxEvidence smallest times, ascending.
	want := slices.Sorted(slices.Values(all))[:report.MaxEvidence]
	for i, e := range ev {
		if e.AtMS != want[i] {
			t.Fatalf("evidence times %v, want %v", atms(ev), want)
		}
		if wantInst := int(e.AtMS%30)/7 + 1; e.Instance != wantInst {
			t.Errorf("evidence at %d from instance %d, want %d", e.AtMS, e.Instance, wantInst)
		}
	}
	// The inputs are not modified.
	if reps[0].Checks[0].Evidence[0].Instance != 0 {
		t.Error("Merge modified its input's evidence")
	}
}

func atms(ev []report.Evidence) []int64 {
	var out []int64
	for _, e := range ev {
		out = append(out, e.AtMS)
	}
	return out
}

func TestMergeRefusesOtherSchemas(t *testing.T) {
	_, err := report.Merge(report.Report{Schema: 1}, report.Report{Schema: 2})
	if !errors.Is(err, report.ErrSchema) || !strings.Contains(err.Error(), "report 2 has report schema version 2, report 1 has 1") {
		t.Errorf("err = %v", err)
	}
	if _, err := report.Merge(); err == nil {
		t.Error("merging nothing succeeded")
	}
}

func TestMergeDistinctProfiles(t *testing.T) {
	m := merge(t,
		report.Report{Schema: 1, Profile: "soak"},
		report.Report{Schema: 1, Profile: "lossy-resume", Partial: true},
		report.Report{Schema: 1, Profile: "soak", Command: &report.Command{Args: []string{"x"}, ExitCode: 3}})
	if m.Profile != "soak, lossy-resume" || !m.Partial || m.Command != nil || len(m.Shards) != 3 || m.Shards[2].Command == nil || m.Shards[2].Command.ExitCode != 3 {
		t.Errorf("got %+v", m)
	}
	// The third report's command failed: the merge fails, and says so.
	if m.Verdict != report.VerdictFail || !strings.Contains(m.Why, "1 of 3 commands failed (report 3: exit code 3)") {
		t.Errorf("verdict %s (%s)", m.Verdict, m.Why)
	}
}

// TestMergeKeepsEveryShard: a passing and a failing shard merge into a
// failure that keeps each shard's profile, seed and verdict; an
// inconclusive shard makes an otherwise passing merge inconclusive.
func TestMergeKeepsEveryShard(t *testing.T) {
	pass := report.Report{Schema: 1, Verdict: report.VerdictPass, Profile: "soak", Seed: 4}
	fail := report.Report{Schema: 1, Verdict: report.VerdictFail, Why: "failed: x (1)", Profile: "polling-server", Seed: 9,
		Checks: []report.Check{{ID: "client.retry-honoured", Severity: "error", Status: report.StatusFail, Count: 1}}}
	short := report.Report{Schema: 1, Verdict: report.VerdictInconclusive, Why: "no fault fired", Profile: "soak", Seed: 5}
	m := merge(t, pass, fail)
	if m.Verdict != report.VerdictFail || len(m.Shards) != 2 || m.Shards[1].Seed != 9 || m.Shards[0].Seed != 4 || m.Shards[1].Verdict != report.VerdictFail {
		t.Errorf("pass+fail: %s, shards %+v", m.Verdict, m.Shards)
	}
	m = merge(t, pass, short)
	if m.Verdict != report.VerdictInconclusive || !strings.Contains(m.Why, "report 2 (no fault fired)") {
		t.Errorf("pass+inconclusive: %s (%s)", m.Verdict, m.Why)
	}
}
