package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/examples/gosdk/refpeer"
)

// exercisedCut is the exercised: line of a run that cut a stream with an
// answer pending and saw the client resume it (however that ended).
var exercisedCut = regexp.MustCompile(`exercised: [1-9]\d* cuts? with an answer pending[^\n]*\),\s+[1-9]\d* resumptions? \(`)

// demoSuggestion is a fray demo that fray or its docs suggest.
var demoSuggestion = regexp.MustCompile("fray demo --profile ([a-z-]+)(?: --seed ([0-9]+))?")

// TestDemoSuggestionsExercise runs every fray demo that fray suggests (the
// demo's closing line after each profile it suggests, its help's example)
// and the docs and README show, at the seed shown: none is inconclusive,
// and each summary's exercised: line shows a cut with an answer pending
// and the resumption that followed.
func TestDemoSuggestionsExercise(t *testing.T) {
	var text bytes.Buffer
	writeNextSteps(&text, "polling-server", "")
	writeNextSteps(&text, "lossy-resume", "")
	_, help, _ := runFray(t, 10*time.Second, "demo", "--help")
	text.WriteString(help)
	for _, f := range append([]string{filepath.Join(root, "README.md")}, docFiles(t)...) {
		b := readFile(t, f)
		text.Write(b)
	}
	var runs [][]string
	for _, m := range demoSuggestion.FindAllStringSubmatch(text.String(), -1) {
		args := []string{"demo", "--profile", m[1]}
		if m[2] != "" {
			args = append(args, "--seed", m[2])
		}
		if !slices.ContainsFunc(runs, func(r []string) bool { return slices.Equal(r, args) }) {
			runs = append(runs, args)
		}
	}
	if len(runs) < 3 {
		t.Fatalf("found %d demo suggestions (%v), want at least the two closing lines and the help's example", len(runs), runs)
	}
	for _, args := range runs {
		t.Run(strings.Join(args[1:], " "), func(t *testing.T) {
			code, stdout, stderr := runFray(t, 60*time.Second, args...)
			if code == exitInconclusive || !exercisedCut.MatchString(stdout) {
				t.Errorf("fray %s: exit %d, want a verdict with a cut and its resumption exercised; stdout:\n%s\nstderr:\n%s",
					strings.Join(args, " "), code, stdout, stderr)
			}
		})
	}
}

// docFiles lists the Markdown files of docs/.
func docFiles(t *testing.T) []string {
	t.Helper()
	out, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestREADMEProfilesExercise runs the profiles the README's tutorial
// suggests and its recipes run with fray proxy (but the soak), each as the tutorial runs
// it: fray proxy in front of the reference server, the reference client
// making its one call through it, then Ctrl-C. None is inconclusive at its
// default seed, and each summary shows a cut with an answer pending and
// the resumption that followed.
func TestREADMEProfilesExercise(t *testing.T) {
	tutorial := readmeSection(t, "Tutorial")
	var names []string
	for _, m := range regexp.MustCompile("`--profile ([a-z-]+)`").FindAllStringSubmatch(tutorial, -1) {
		names = append(names, m[1])
	}
	for _, c := range shellCommands(t, filepath.Join(root, "README.md")) {
		// A soak (--report-every) lasts hours: its faults come on their
		// schedule, minutes in.
		if a, ok := frayArgs(c.words); ok && a[0] == "proxy" && !slices.Contains(a, "--report-every") {
			if i := slices.Index(a, "--profile"); i > 0 && i+1 < len(a) {
				names = append(names, a[i+1])
			}
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	if len(names) < 2 {
		t.Fatalf("the README suggests %v, want the tutorial's suggestions and its recipes' profiles", names)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			code, summary := proxyOneCall(t, name)
			if code == exitInconclusive || !exercisedCut.MatchString(summary) {
				t.Errorf("--profile %s with the tutorial's pair: exit %d, want a verdict with a cut and its resumption exercised; summary:\n%s", name, code, summary)
			}
		})
	}
}

// proxyOneCall runs fray proxy with profile in front of the reference
// server, the reference client through it (its failure is the verdict's
// business, not the test's), then stops fray as Ctrl-C does and returns
// its exit code and summary.
func proxyOneCall(t *testing.T, profile string) (int, string) {
	t.Helper()
	code, summary, _, _ := proxyRefPair(t, func(upstream string) []string {
		return []string{"proxy", "--upstream", upstream, "--listen", "127.0.0.1:0", "--profile", profile}
	}, refpeer.ClientOptions{})
	return code, summary
}

// proxyRefPair starts the reference server of examples/gosdk on a free
// port, runs fray with the arguments args gives for that upstream (a fray
// proxy command line, after "fray"), runs the reference client with opts
// through the address fray prints, then stops fray as Ctrl-C does. It
// returns fray's exit code and summary, and what the client got.
func proxyRefPair(t *testing.T, args func(upstream string) []string, opts refpeer.ClientOptions) (int, string, *refpeer.Result, error) {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/mcp", refpeer.NewHandler(refpeer.ServerOptions{RetryAfter: refpeer.DefaultRetryAfter}))
	base, stop := startFray(t, context.Background(), args(serve(t, mux).URL)...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	opts.Endpoint = base + "/mcp"
	res, cerr := refpeer.RunClient(ctx, opts)
	cancel()
	code, stdout, _ := stop() // Ctrl-C
	return code, stdout, res, cerr
}

// TestPurposeNeverExercised: a run that would pass is inconclusive (exit
// 4, JUnit not green) when what its profile exists for never happened,
// and says why: a cut whose selector never matches beside a latency that
// fires every time; a lose whose seeded draws skip every stream, with a
// seed that fires it, which then does.
func TestPurposeNeverExercised(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string { return writeFile(t, filepath.Join(dir, name), text) }
	decorative := write("decorative.toml", "[[fault]]\nkind = \"latency\"\ndelay = \"1ms\"\n\n"+
		"[[fault]]\nkind = \"close\"\nstream = \"post\"\nrequest_method = \"nosuch/method\"\nafter_priming = true\n")
	junit := filepath.Join(dir, "fray.xml")
	code, stdout, stderr := runFray(t, 60*time.Second, "demo", "--profile", decorative, "--junit", junit)
	want := "fault 1 (close), which exercises a cut with an answer pending, never acted: nothing it selects came"
	if code != exitInconclusive || !strings.Contains(stdout, want) || !strings.Contains(stdout, "latency ") {
		t.Errorf("exit %d, want %d with %q, the latency fired; stdout:\n%s\nstderr:\n%s", code, exitInconclusive, want, stdout, stderr)
	}
	if x, err := os.ReadFile(junit); err != nil || !strings.Contains(string(x), `<failure message="inconclusive: the recovery the profile exists for never happened`) {
		t.Errorf("JUnit (%v) does not fail the run:\n%s", err, x)
	}

	// lossy-resume without first = true: at seed 42 the draws skip the
	// call streams of both clients.
	lossy := write("lossy.toml", "seed = 42\n[[fault]]\nkind = \"lose\"\nstream = \"post\"\nafter_events = 2\nevents = 3\nprobability = 0.5\n")
	code, stdout, stderr = runFray(t, 60*time.Second, "demo", "--profile", lossy)
	m := regexp.MustCompile(`fault 0 \(lose\), which exercises a cut with an answer pending, never acted: it matched \d+ streams; probability 0\.5 skipped \d+ of them at seed 42[^;]*; --seed (\d+) fires it on every one it skipped`).FindStringSubmatch(stdout)
	if code != exitInconclusive || m == nil {
		t.Fatalf("exit %d, want %d naming the skipped draws and a seed; stdout:\n%s\nstderr:\n%s", code, exitInconclusive, stdout, stderr)
	}
	code, stdout, stderr = runFray(t, 60*time.Second, "demo", "--profile", lossy, "--seed", m[1])
	if code == exitInconclusive || !exercisedCut.MatchString(stdout) {
		t.Errorf("--seed %s, offered as firing the lose: exit %d; stdout:\n%s\nstderr:\n%s", m[1], code, stdout, stderr)
	}
}

// TestREADMEShowsTheExercisedLine: the exercised: line the README's
// tutorial shows is the one its run prints.
func TestREADMEShowsTheExercisedLine(t *testing.T) {
	b := readFile(t, filepath.Join(root, "README.md"))
	code, summary := proxyOneCall(t, "polling-server")
	_, line, ok := strings.Cut(summary, "\n  exercised: ")
	if code != exitOK || !ok {
		t.Fatalf("exit %d, summary:\n%s", code, summary)
	}
	line, _, _ = strings.Cut(line, "\n  1 fault injected")
	if want := "\n  exercised: " + line + "\n"; !strings.Contains(string(b), want) {
		t.Errorf("README.md does not show the tutorial's exercised line:%s", want)
	}
}
