package timeline

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/observe"
)

// browsersOptional names the environment variable that lets the browser
// test skip where no Chromium is installed. Without it, a missing
// Chromium fails the test: CI installs one.
const browsersOptional = "FRAY_BROWSERS_OPTIONAL"

// chromium finds a Chromium binary, or skips or fails the test.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv(browsersOptional) != "" {
		t.Skipf("SKIPPED: no chromium on PATH and %s is set; the timeline was not rendered in a browser", browsersOptional)
	}
	t.Fatalf("no chromium on PATH (install Debian's chromium, as .ci/run does, or set %s=1 to skip)", browsersOptional)
	return ""
}

// headless runs Chromium on the page with args and returns its stdout.
func headless(t *testing.T, bin, page string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	profile := t.TempDir()
	base := []string{"--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--disable-extensions",
		"--user-data-dir=" + profile, "--window-size=1400,900"}
	cmd := exec.CommandContext(ctx, bin, append(append(base, args...), "file://"+page)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstderr:\n%s", bin, strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes()
}

// TestRendersInChromium draws a generated 5,000-event trace in headless
// Chromium and reads the rendered DOM: the page reports how long it took
// to parse its data and draw (performance.now() when the first frame is
// drawn), shows lane labels and the findings, and leaves a screenshot.
func TestRendersInChromium(t *testing.T) {
	bin := chromium(t)
	obs, end, lost := generate(5000, 11)
	rep := sampleReport(lost)
	dir := t.ArtifactDir()
	page := filepath.Join(dir, "timeline.html")
	var buf bytes.Buffer
	if err := Write(&buf, Input{Observations: obs, End: end, Report: rep}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := string(headless(t, bin, page, "--dump-dom"))

	ms := regexp.MustCompile(`id="render-ms" data-html="([0-9.]+)" data-parse="([0-9.]+)" data-build="([0-9.]+)" data-draw="([0-9.]+)">([0-9.]+)<`).FindStringSubmatch(dom)
	if ms == nil {
		t.Fatalf("no render time in the DOM: the script did not finish\n%.2000s", dom)
	}
	renderMS, _ := strconv.ParseFloat(ms[5], 64)
	t.Logf("rendered %d events (%d bytes of HTML) in %.1f ms, measured in the page from navigation start: "+
		"HTML %s ms, data parsed %s ms, built %s ms, first frame %s ms", countEvents(obs), buf.Len(), renderMS, ms[1], ms[2], ms[3], ms[4])
	if renderMS >= 3000 {
		t.Errorf("rendered in %.1f ms, want under 3000", renderMS)
	}
	if m := regexp.MustCompile(`data-events="(\d+)"`).FindStringSubmatch(dom); m == nil || m[1] != strconv.Itoa(countEvents(obs)) {
		t.Errorf("page counts events %v, want %d", m, countEvents(obs))
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

	shot := filepath.Join(dir, "timeline.png")
	headless(t, bin, page, "--screenshot="+shot, "--hide-scrollbars")
	if fi, err := os.Stat(shot); err != nil || fi.Size() < 10_000 {
		t.Fatalf("screenshot %s: %v (size %v)", shot, err, fi)
	}
	t.Logf("screenshot: %s (kept with go test -artifacts)", shot)
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
