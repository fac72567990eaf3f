package timeline

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/frayproxy/fray/proxy/internal/browsertest"
	"github.com/frayproxy/fray/proxy/observe"
)

// chromium finds a Chromium binary, or skips or fails the test.
func chromium(t *testing.T) string {
	return browsertest.Chromium(t, "the timeline was not rendered in a browser")
}

// headless runs Chromium on the page with args and returns its stdout.
func headless(t *testing.T, bin, page string, args ...string) []byte {
	return browsertest.Headless(t, bin, "file://"+page, append([]string{"--window-size=1400,900"}, args...)...)
}

// pageOf returns the page Write makes of in.
func pageOf(t *testing.T, in Input) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, in); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// render writes html to the file page, draws it in Chromium and returns
// the rendered DOM, as text and parsed; it fails the test unless the
// page's script finished.
func render(t *testing.T, bin, page string, html []byte) (string, elements) {
	t.Helper()
	if err := os.WriteFile(page, html, 0o644); err != nil {
		t.Fatal(err)
	}
	dom := string(headless(t, bin, page, "--dump-dom"))
	els := parseDOM(dom)
	if b := els.first("body"); b == nil || b.attr["data-rendered"] != "true" {
		t.Fatalf("the script did not finish\n%.3000s", dom)
	}
	return dom, els
}

// screenshot draws page into the PNG file shot and requires a picture.
func screenshot(t *testing.T, bin, page, shot string) {
	t.Helper()
	headless(t, bin, page, "--screenshot="+shot, "--hide-scrollbars")
	if fi, err := os.Stat(shot); err != nil || fi.Size() < 10_000 {
		t.Fatalf("screenshot %s: %v (size %v)", shot, err, fi)
	}
	t.Logf("screenshot: %s (kept with go test -artifacts)", shot)
}

// eventsFlag sizes the generated trace of TestRendersInChromium; raise it
// to check a large trace by hand:
//
//	go test ./proxy/timeline -run TestRendersInChromium -v -args -timeline.events=200000
var eventsFlag = flag.Int("timeline.events", 5000, "events in the trace TestRendersInChromium draws")

// renderMSFlag bounds how long the page of TestRendersInChromium may take
// to draw its first frame.
var renderMSFlag = flag.Float64("timeline.render-ms", 3000, "the most TestRendersInChromium's page may take to draw, in ms")

// TestRendersInChromium draws a generated trace (5,000 events unless
// -timeline.events says otherwise) in headless Chromium and reads the
// rendered DOM: the page records how long it took to parse its data and
// draw (performance.now() when the first frame is drawn) without showing
// it, shows lane labels and the findings, and leaves a screenshot.
func TestRendersInChromium(t *testing.T) {
	bin := chromium(t)
	obs, end, lost := generate(*eventsFlag, 11)
	rep := sampleReport(lost)
	dir := t.ArtifactDir()
	page := filepath.Join(dir, "timeline.html")
	html := pageOf(t, Input{Observations: obs, End: end, Report: rep})
	dom, els := render(t, bin, page, html)

	body := els.first("body")
	renderMS, err := strconv.ParseFloat(body.attr["data-render-ms"], 64)
	if err != nil {
		t.Fatalf("no render time on <body>: %v", err)
	}
	t.Logf("rendered %d events (%d bytes of HTML) in %.1f ms, measured in the page from navigation start: "+
		"HTML %s ms, data parsed %s ms, built %s ms, first frame %s ms", countEvents(obs), len(html), renderMS,
		body.attr["data-html"], body.attr["data-parse"], body.attr["data-build"], body.attr["data-draw"])
	if renderMS >= *renderMSFlag {
		t.Errorf("rendered in %.1f ms, want under %.0f", renderMS, *renderMSFlag)
	}
	if strings.Contains(dom, "rendered in") {
		t.Error("the page shows its render time to users")
	}
	if got := body.attr["data-events"]; got != strconv.Itoa(countEvents(obs)) {
		t.Errorf("page counts %s events, want %d", got, countEvents(obs))
	}
	labels := regexp.MustCompile(`<div class="lane-label[^"]*" data-ex="(\d+)"[^>]*>#(\d+) ([^<]+)</div>`).FindAllStringSubmatch(dom, -1)
	if len(labels) < 10 {
		t.Errorf("%d lane labels in view, want the window full (at least 10)", len(labels))
	}
	for _, l := range labels {
		if l[1] != l[2] || strings.TrimSpace(l[3]) == "" {
			t.Errorf("lane label %q", l[0])
		}
	}
	if !strings.Contains(dom, `class="session-label"`) {
		t.Error("no session header in view")
	}
	for _, want := range []string{
		`data-check="server.replay-complete"`, "left out " + lost[0].lost[1], fmt.Sprintf("exchange %d", lost[0].exchange),
		"after fault 0 (lose)", "11 more", `data-check="server.priming-event"`,
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the rendered findings do not show %q", want)
		}
	}
	checkLabelsApart(t, els, laneLabels...)

	screenshot(t, bin, page, filepath.Join(dir, "timeline.png"))
}

func countEvents(obs []*observe.Observation) int {
	n := 0
	for _, o := range obs {
		if o.Event != nil {
			n++
		}
	}
	return n
}

// TestExplainsARunInChromium draws the scenario (a failure, a resumption
// that came too early, two faults on one event and two on neighbouring
// events, a client command that failed) and reads from the rendered DOM
// that the page explains it: the request never answered, the response
// marks, the retry windows, fault labels that do not overlap and say what
// each fault did, a legend of every mark, the command and its exit code,
// and every check with its status, failed and warned first.
func TestExplainsARunInChromium(t *testing.T) {
	bin := chromium(t)
	sc := newScenario()
	dir := t.ArtifactDir()
	page := filepath.Join(dir, "explained.html")
	dom, els := render(t, bin, page, pageOf(t, sc.input()))
	canvas := els.byID("canvas")
	drawn := func(what string) int {
		n, _ := strconv.Atoi(canvas.attr["data-drawn-"+what])
		return n
	}

	t.Run("unanswered request", func(t *testing.T) {
		marks := els.withClass("unanswered").having("data-id") // on a lane, not the legend's
		if len(marks) != 1 || marks[0].attr["data-id"] != "2" {
			t.Fatalf("unanswered marks %v, want one for request 2", attrs(marks, "data-id"))
		}
		for _, want := range []string{"request 2 (tools/call) never got its response", "e2e.every-request-answered: request 2 (tools/call)"} {
			if !strings.Contains(marks[0].attr["title"], want) {
				t.Errorf("unanswered mark says %q, want %q in it", marks[0].attr["title"], want)
			}
		}
		pills := els.withClass("lane-pill").having("data-ex") // on a lane label
		if len(pills) != 1 || pills[0].attr["data-ex"] != "4" || pills[0].text != "no response" {
			t.Errorf("lane pills %v, want one on exchange 4", attrs(pills, "data-ex"))
		}
	})
	t.Run("response marks", func(t *testing.T) {
		// initialize answered in a JSON body, tools/call #3 by an event.
		if n := drawn("responses"); n != 2 {
			t.Errorf("%d response marks drawn, want 2", n)
		}
	})
	t.Run("retry windows", func(t *testing.T) {
		if n, e := drawn("windows"), drawn("early"); n != 2 || e != 1 {
			t.Errorf("%d retry windows drawn, %d early reconnections, want 2 and 1", n, e)
		}
		var texts []string
		for _, e := range els.withClass("retry-label") {
			texts = append(texts, e.text)
			if e.hasClass("early") != strings.HasPrefix(e.text, "reconnected after") {
				t.Errorf("retry label %q: class %q", e.text, e.attr["class"])
			}
		}
		want := []string{"reconnected after 19ms, retry 500ms", "retry 500ms, no reconnection"}
		if !slices.Equal(texts, want) {
			t.Errorf("retry labels %q, want %q", texts, want)
		}
	})
	t.Run("fault labels", func(t *testing.T) {
		effects := map[string]string{
			"0": "fault 0 of the profile (delay), on event 2 of exchange 4 at 100ms:\n  held the event 150ms",
			"1": "fault 1 of the profile (duplicate), on event 2 of exchange 4 at 100ms:\n  wrote the event 2 times",
			"2": "fault 2 of the profile (reset), on event 3 of exchange 4 at 262ms:\n  reset the connection instead of writing the event",
			"3": "fault 3 of the profile (drop), on event 1 of exchange 6 at 470ms:\n  dropped the event",
			"4": `fault 4 of the profile (strip-id), on event 2 of exchange 6 at 472ms:` + "\n" + `  removed the id "6_2"`,
		}
		seen := map[string]int{}
		labels := els.withClass("fault-label")
		for _, e := range labels {
			for _, i := range strings.Fields(e.attr["data-faults"]) {
				seen[i]++
				if !strings.Contains(e.attr["title"], effects[i]) {
					t.Errorf("label %q (faults %s) says %q, want %q in it", e.text, e.attr["data-faults"], e.attr["title"], effects[i])
				}
			}
		}
		for i := range effects {
			if seen[i] != 1 {
				t.Errorf("fault %s is in %d labels, want 1", i, seen[i])
			}
		}
		if len(labels) == 0 || labels[0].text != "delay + duplicate" {
			t.Errorf("first fault label %v, want the two faults of event 2 as %q", attrs(labels, "data-faults"), "delay + duplicate")
		}
		if drawn("faults") != 5 {
			t.Errorf("%d fault marks drawn, want 5", drawn("faults"))
		}
		checkLabelsApart(t, els, laneLabels...)
	})
	t.Run("legend", func(t *testing.T) {
		keys := attrs(els.having("data-legend"), "data-legend")
		for _, k := range []string{"delivered", "priming", "not-delivered", "duplicated", "response", "error-response",
			"response-not-delivered", "unanswered", "finding-event", "fault", "lane-post", "lane-get", "lane-resume",
			"lane-legacy", "lane-other", "end", "cut", "retry-window", "reconnect-early", "reconnect-late", "link",
			"run-end", "finding-lane"} {
			if !slices.Contains(keys, k) {
				t.Errorf("legend has no %q entry (it has %q)", k, keys)
			}
		}
		// Every kind of mark the frame drew has its entry.
		for attr := range canvas.attr {
			what, ok := strings.CutPrefix(attr, "data-drawn-")
			if !ok {
				continue
			}
			if k := legendKey[what]; k == "" || !slices.Contains(keys, k) {
				t.Errorf("the page drew %q marks, which the legend does not explain", what)
			}
		}
	})
	t.Run("command", func(t *testing.T) {
		c := els.byID("command")
		if c == nil {
			t.Fatal("no command line")
		}
		if _, hidden := c.attr["hidden"]; hidden {
			t.Error("the command line is hidden")
		}
		if c.attr["data-exit"] != "1" || !strings.Contains(dom, "<code>node client.mjs --call slow-tool</code>") || !strings.Contains(dom, ">exit 1<") {
			t.Errorf("command line %v does not show the command and exit 1", c.attr)
		}
	})
	t.Run("checks", func(t *testing.T) {
		order := map[string]int{"fail": 0, "warn": 1, "pass": 2, "skip": 3}
		last := 0
		got := map[string]string{}
		for _, e := range els.withClass("check") {
			id, st := e.attr["data-check"], e.attr["data-status"]
			got[id] = st
			if order[st] < last {
				t.Errorf("check %s (%s) comes after a %s one", id, st, []string{"fail", "warn", "pass", "skip"}[last])
			}
			last = order[st]
		}
		for _, c := range sc.report.Checks {
			if got[c.ID] != c.Status {
				t.Errorf("check %s shown as %q, want %q", c.ID, got[c.ID], c.Status)
			}
		}
		if len(got) != len(sc.report.Checks) {
			t.Errorf("%d checks shown, want %d", len(got), len(sc.report.Checks))
		}
	})
	t.Run("run markers", func(t *testing.T) {
		r := els.withClass("run-label")
		if len(r) != 1 || r[0].attr["data-kind"] != "end" || r[0].text != "end of run" || drawn("run") != 1 {
			t.Errorf("run labels %v (%d lines drawn), want the end of the run", attrs(r, "data-kind"), drawn("run"))
		}
	})
	t.Run("fits its content", func(t *testing.T) {
		if strings.Contains(dom, "rendered in") {
			t.Error("the page shows its render time to users")
		}
		// Seven rows (a session header and six exchanges) need far less
		// than the 900 px window.
		if h := els.byID("scroller").style(t, "height"); h > 400 {
			t.Errorf("the drawing is %.0f px tall for 7 rows", h)
		}
	})

	screenshot(t, bin, page, filepath.Join(dir, "explained.png"))
}

// TestRunMarksInChromium draws run-level marks of another kind beside the
// end of the run, two of them a millisecond apart: each is a line across
// the lanes, and their labels do not overlap.
func TestRunMarksInChromium(t *testing.T) {
	bin := chromium(t)
	m := Build(newScenario().input())
	m.Run = append([]RunMark{
		{AtUS: 400_000, Kind: "profile", Label: "profile calm", Detail: "seed 9"},
		{AtUS: 401_000, Kind: "profile", Label: "profile flaky-b", Detail: "seed 10"},
	}, m.Run...)
	var buf bytes.Buffer
	if err := WriteModel(&buf, m); err != nil {
		t.Fatal(err)
	}
	_, els := render(t, bin, filepath.Join(t.TempDir(), "run.html"), buf.Bytes())
	if n := els.byID("canvas").attr["data-drawn-run"]; n != "3" {
		t.Errorf("%s run lines drawn, want 3", n)
	}
	var got []string
	for _, e := range els.withClass("run-label") {
		got = append(got, e.attr["data-kind"]+": "+e.text+" ("+e.attr["title"]+")")
	}
	want := []string{"profile: profile calm (profile calm\nseed 9)", "profile: profile flaky-b (profile flaky-b\nseed 10)",
		"end: end of run (end of run\nthe run stopped observing at 850ms)"}
	if !slices.Equal(got, want) {
		t.Errorf("run labels\n got %q\nwant %q", got, want)
	}
	checkLabelsApart(t, els, "run-label")
}

// legendKey maps what the page counts as drawn (data-drawn-*) to the
// legend entry that explains it.
var legendKey = map[string]string{
	"events": "delivered", "priming": "priming", "bad": "not-delivered", "dup": "duplicated", "responses": "response",
	"rings": "finding-event", "faults": "fault", "lane-post": "lane-post", "lane-get": "lane-get", "lane-resume": "lane-resume",
	"lane-legacy": "lane-legacy", "lane-other": "lane-other", "ends": "end", "cuts": "cut", "windows": "retry-window",
	"early": "reconnect-early", "reconnects": "reconnect-late", "links": "link", "run": "run-end",
}

func attrs(es elements, name string) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.attr[name])
	}
	return out
}

// hoverProbe moves the mouse over each fault triangle (just left of its
// label, at the triangle's height) and into each retry window (past its
// label), and keeps what the tooltip said, as JSON on <body data-probe>.
const hoverProbe = `<script>
(function () {
  const canvas = document.getElementById("canvas"), tip = document.getElementById("tip"), out = [];
  const hover = (what, x, y) => {
    canvas.dispatchEvent(new MouseEvent("mousemove", { clientX: x, clientY: y, bubbles: true }));
    out.push({ what, tip: tip.style.display === "block" ? tip.textContent : "" });
  };
  for (const l of document.querySelectorAll("#overlay .fault-label")) {
    const r = l.getBoundingClientRect();
    hover("fault " + l.dataset.faults, r.left - 5, r.top + 12);
  }
  for (const l of document.querySelectorAll("#overlay .retry-label")) {
    const r = l.getBoundingClientRect();
    hover("window " + l.textContent, r.right + 20, r.top + r.height / 2);
  }
  document.body.dataset.probe = JSON.stringify(out);
})();
</script></body>`

// TestHoverInChromium points at the scenario's marks on the canvas and
// reads the tooltips: each fault says what it did, each retry window
// when the stream ended, the retry and the reconnection.
func TestHoverInChromium(t *testing.T) {
	bin := chromium(t)
	html := strings.Replace(string(pageOf(t, newScenario().input())), "</body>", hoverProbe, 1)
	_, els := render(t, bin, filepath.Join(t.TempDir(), "hover.html"), []byte(html))
	body := els.first("body")
	var got []struct{ What, Tip string }
	if err := json.Unmarshal([]byte(body.attr["data-probe"]), &got); err != nil {
		t.Fatalf("probe: %v (%q)", err, body.attr["data-probe"])
	}
	want := map[string][]string{
		"fault 0 1": {"fault 0 of the profile (delay)", "held the event 150ms", "fault 1 of the profile (duplicate)", "wrote the event 2 times"},
		"fault 2":   {"fault 2 of the profile (reset)", "reset the connection instead of writing the event"},
		"fault 3 4": {"fault 3 of the profile (drop)", "dropped the event", "fault 4 of the profile (strip-id)", `removed the id "6_2"`},
		"window reconnected after 19ms, retry 500ms": {"exchange 4 ended at 262ms (fault-reset) before its response", "retry 500 ms", "reconnected after 19ms on exchange 5: too early"},
		"window retry 500ms, no reconnection":        {"exchange 5 ended at 300ms (complete) before its response", "no reconnection followed"},
	}
	if len(got) != len(want) {
		t.Errorf("hovered %d marks, want %d: %+v", len(got), len(want), got)
	}
	for _, g := range got {
		for _, w := range want[g.What] {
			if !strings.Contains(g.Tip, w) {
				t.Errorf("hovering %s shows %q, want %q in it", g.What, g.Tip, w)
			}
		}
		if want[g.What] == nil {
			t.Errorf("hovered an unexpected %s", g.What)
		}
	}
}

// element is a start tag of a DOM Chromium dumped: its attributes and the
// text that follows it up to the next tag.
type element struct {
	tag  string
	attr map[string]string
	text string
}

type elements []*element

var (
	startTag = regexp.MustCompile(`<([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[^\s"'>/=]+(?:="[^"]*")?)*)\s*/?>([^<]*)`)
	attrRe   = regexp.MustCompile(`([^\s"'>/=]+)(?:="([^"]*)")?`)
)

// parseDOM reads the start tags of dom, in document order. Chromium
// writes every attribute value in double quotes, with '"' escaped, which
// is all this needs.
func parseDOM(dom string) elements {
	var out elements
	for _, m := range startTag.FindAllStringSubmatch(dom, -1) {
		e := &element{tag: strings.ToLower(m[1]), attr: map[string]string{}, text: html.UnescapeString(m[3])}
		for _, a := range attrRe.FindAllStringSubmatch(m[2], -1) {
			e.attr[a[1]] = html.UnescapeString(a[2])
		}
		out = append(out, e)
	}
	return out
}

func (e *element) hasClass(c string) bool { return slices.Contains(strings.Fields(e.attr["class"]), c) }

// first returns the first element with tag, nil when none.
func (es elements) first(tag string) *element {
	for _, e := range es {
		if e.tag == tag {
			return e
		}
	}
	return nil
}

// byID returns the element with id, nil when none.
func (es elements) byID(id string) *element {
	for _, e := range es {
		if e.attr["id"] == id {
			return e
		}
	}
	return nil
}

// withClass returns the elements of class c, in document order.
func (es elements) withClass(c string) elements {
	var out elements
	for _, e := range es {
		if e.hasClass(c) {
			out = append(out, e)
		}
	}
	return out
}

// having returns the elements that carry the attribute name, in document
// order.
func (es elements) having(name string) elements {
	var out elements
	for _, e := range es {
		if _, ok := e.attr[name]; ok {
			out = append(out, e)
		}
	}
	return out
}

// style reads a length in px from the element's style attribute.
func (e *element) style(t *testing.T, prop string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?:^|;)\s*` + prop + `:\s*(-?[0-9.]+)px`).FindStringSubmatch(e.attr["style"])
	if m == nil {
		t.Fatalf("<%s class=%q> has no %s in style %q", e.tag, e.attr["class"], prop, e.attr["style"])
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// labelHeight is the height of every text label the page draws (page.css:
// .fault-label, .link-label, .retry-label, .run-label).
const labelHeight = 12

// laneLabels are the classes of the text labels drawn on the lanes, in
// one layer; run labels have a layer of their own above the time axis.
var laneLabels = []string{"fault-label", "link-label", "retry-label"}

// checkLabelsApart fails the test when two text labels of the classes
// overlap: their boxes, read from the positions and widths the page gave
// them, must be disjoint.
func checkLabelsApart(t *testing.T, els elements, classes ...string) {
	t.Helper()
	type box struct {
		e                        *element
		left, top, right, bottom float64
	}
	var boxes []box
	for _, c := range classes {
		for _, e := range els.withClass(c) {
			l, tp := e.style(t, "left"), e.style(t, "top")
			boxes = append(boxes, box{e, l, tp, l + e.style(t, "width"), tp + labelHeight})
		}
	}
	for i, a := range boxes {
		for _, b := range boxes[i+1:] {
			if a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom {
				t.Errorf("labels overlap: %q at (%.1f, %.1f)-(%.1f, %.1f) and %q at (%.1f, %.1f)-(%.1f, %.1f)",
					a.e.text, a.left, a.top, a.right, a.bottom, b.e.text, b.left, b.top, b.right, b.bottom)
			}
		}
	}
}
