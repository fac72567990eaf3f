package timeline

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
	"github.com/frayproxy/fray/proxy/trace"
)

func TestBuild(t *testing.T) {
	obs, end, lost := generate(2000, 7)
	m := Build(Input{Header: trace.Header{Profile: "lossy-resume", Seed: 42}, Observations: obs, End: end, Report: sampleReport(lost)})
	if events := countEvents(obs); len(m.Events.Lane) != events {
		t.Fatalf("%d event marks for %d events", len(m.Events.Lane), events)
	}
	// Lanes come grouped by session, each session's lanes in start order,
	// and each lane's events are contiguous and in time order.
	seen := map[int]bool{}
	for si, s := range m.Sessions {
		if seen[s.Seq] {
			t.Errorf("session %d appears twice", s.Seq)
		}
		seen[s.Seq] = true
		for i, li := range s.Lanes {
			l := m.Lanes[li]
			if l.Session != s.Seq {
				t.Errorf("session %d (group %d) holds lane of session %d", s.Seq, si, l.Session)
			}
			if i > 0 && m.Lanes[s.Lanes[i-1]].StartUS > l.StartUS {
				t.Errorf("session %d: lanes out of start order", s.Seq)
			}
			for e := l.First; e < l.First+l.Events; e++ {
				if m.Events.Lane[e] != li || (e > l.First && m.Events.AtUS[e] < m.Events.AtUS[e-1]) {
					t.Fatalf("lane %d: event %d misplaced", li, e)
				}
			}
		}
	}
	// Every reconnection points at the last event the client got before
	// the loss, on the stream that lost events.
	if len(m.Links) != len(lost) {
		t.Fatalf("%d links, want %d", len(m.Links), len(lost))
	}
	for i, k := range m.Links {
		if k.Event < 0 {
			t.Fatalf("link %d (Last-Event-ID %q) resolved to nothing", i, k.ID)
		}
		if got := m.Strings[m.Events.ID[k.Event]]; got != lost[i].lastID || k.ID != lost[i].lastID {
			t.Errorf("link %d names %q and points at %q, want %q", i, k.ID, got, lost[i].lastID)
		}
		if ex := m.Lanes[m.Events.Lane[k.Event]].Exchange; ex != uint64(lost[i].exchange) {
			t.Errorf("link %d points into exchange %d, want %d", i, ex, lost[i].exchange)
		}
	}
	// Faults: every firing is a mark, the lose ones on the lost event.
	firings := 0
	for _, o := range obs {
		firings += len(o.Fired)
	}
	if len(m.Faults.Lane) != firings {
		t.Errorf("%d fault marks for %d firings", len(m.Faults.Lane), firings)
	}
	for i := range m.Faults.Lane {
		if m.Strings[m.Faults.Kind[i]] == "lose" && m.Events.Fate[m.Faults.Event[i]] != int(observe.Lost) {
			t.Errorf("lose fault %d is not on a lost event", i)
		}
	}
	// Findings: failures first, then warnings; "more" on the last evidence.
	if len(m.Findings) != 2 || m.Findings[0].Status != "fail" || m.Findings[1].Status != "warn" || m.Findings[0].More != 11 {
		t.Errorf("findings = %+v", m.Findings)
	}
}

func TestBuildDanglingLink(t *testing.T) {
	obs, end, _ := generate(50, 1)
	g := gen{rng: rand.New(rand.NewPCG(1, 1)), at: end, ex: 1000}
	lei := "never-sent"
	g.request(2 /* get */, 1, "", &lei)
	m := Build(Input{Observations: append(obs, g.obs...), End: g.at})
	last := m.Links[len(m.Links)-1]
	if last.ID != "never-sent" || last.Event != -1 {
		t.Errorf("link to an unknown id = %+v, want event -1", last)
	}
}

// TestPageIsSelfContained checks that the page loads nothing from
// anywhere and that the data cannot break out of its script element.
func TestPageIsSelfContained(t *testing.T) {
	obs, end, lost := generate(300, 3)
	obs[5].Session = "</script><script>alert(1)</script>"
	r := sampleReport(lost)
	r.Checks[1].Evidence[0].Message = "</script><img src=x onerror=alert(1)>"
	page := string(pageOf(t, Input{Title: "<b>t</b>", Observations: obs, End: end, Report: r}))
	for _, re := range []string{`(?i)<script[^>]+src=`, `(?i)<link[^>]+href=`, `(?i)url\(\s*['"]?https?:`, `(?i)fetch\(`, `(?i)XMLHttpRequest`, `(?i)import\(`} {
		if regexp.MustCompile(re).MatchString(page) {
			t.Errorf("page matches %s: it must fetch nothing", re)
		}
	}
	if n := strings.Count(page, "</script>"); n != 2 {
		t.Errorf("%d </script> tags, want 2: data escaped its element", n)
	}
	if !strings.Contains(page, "<title>&lt;b&gt;t&lt;/b&gt;</title>") {
		t.Error("title not escaped")
	}
	i := strings.Index(page, `<script type="application/json" id="data">`)
	j := strings.Index(page[i:], "</script>")
	var m Model
	if err := json.Unmarshal([]byte(page[i+len(`<script type="application/json" id="data">`):i+j]), &m); err != nil {
		t.Fatalf("embedded data: %v", err)
	}
	if len(m.Lanes) == 0 || len(m.Findings) != 2 {
		t.Errorf("embedded data has %d lanes, %d findings", len(m.Lanes), len(m.Findings))
	}
}

// BenchmarkWrite builds and writes the page of a 200,000-event trace:
// go test -run '^$' -bench Write -benchmem ./proxy/timeline/
func BenchmarkWrite(b *testing.B) {
	obs, end, lost := generate(200_000, 11)
	in := Input{Observations: obs, End: end, Report: sampleReport(lost)}
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if err := Write(&buf, in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len()), "page-bytes")
}

// TestBuildExercised: the page's header carries the report's exercised:
// line, and none without a report.
func TestBuildExercised(t *testing.T) {
	obs, end, lost := generate(50, 1)
	r := sampleReport(lost)
	r.Coverage = &report.Coverage{Cuts: 1, MidStream: 1, Resumptions: 1, Complete: 1}
	m := Build(Input{Observations: obs, End: end, Report: r})
	if want := "exercised: 1 cut with an answer pending (1 mid-stream), 1 resumption (1 complete), 0 re-issues"; m.Exercised != want {
		t.Errorf("Exercised %q, want %q", m.Exercised, want)
	}
	if m := Build(Input{Observations: obs, End: end}); m.Exercised != "" {
		t.Errorf("without a report: %q", m.Exercised)
	}
}
