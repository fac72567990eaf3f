package interop_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/frayproxy/fray/examples/node/nodepeer"
)

// conformanceCLI is the conformance suite's entry point, relative to
// examples/node. compat/register.mjs lets it load on Node 20.
const conformanceCLI = "node_modules/@modelcontextprotocol/conformance/dist/index.js"

// check is one conformance check result, as written to checks.json.
type check struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// checkKey names a check within a run: its scenario, id and the number of
// earlier checks with the same id in that scenario.
type checkKey struct {
	Scenario string
	ID       string
	N        int
}

func (k checkKey) String() string {
	if k.N == 0 {
		return k.Scenario + "/" + k.ID
	}
	return fmt.Sprintf("%s/%s#%d", k.Scenario, k.ID, k.N)
}

// verdicts are the SUCCESS, WARNING and FAILURE checks of a run; INFO
// checks are traces (requests, events, timings) that differ between any
// two runs and are left out.
type verdicts map[checkKey]check

// knownDifferences are checks whose status through fray is known to differ
// from the direct run, each with the statuses and the reason. An entry that
// stops matching fails the test, so it is removed once fray is fixed.
var knownDifferences = map[checkKey]struct{ direct, through, why string }{}

// TestConformanceDirectVsFray runs every server scenario of the MCP
// conformance suite (--suite all) against the conformance server, once
// directly and once through fray, and requires the same status for every
// check.
func TestConformanceDirectVsFray(t *testing.T) {
	env := requireNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	s := env.Start(ctx, t, "conformance-server.mjs")
	origin, path := splitURL(t, s.URL)
	frayURL, fray := startFray(t, origin)

	direct := runConformance(ctx, t, env, s.URL)
	through := runConformance(ctx, t, env, frayURL+path)

	if len(direct) < 40 {
		t.Fatalf("direct run produced %d verdicts; want the whole suite (at least 40)", len(direct))
	}
	for k, c := range direct {
		if c.Status == "FAILURE" {
			t.Errorf("direct run: %s FAILURE: %s (the server, not fray, is off)", k, c.ErrorMessage)
		}
	}
	t.Logf("per-check results:\n%s", verdictTable(direct, through, false))
	for k, want := range knownDifferences {
		d, f := direct[k], through[k]
		if d.Status != want.direct || f.Status != want.through {
			t.Errorf("known difference %s no longer holds: direct %s, through fray %s (listed as %s/%s: %s); update knownDifferences",
				k, d.Status, f.Status, want.direct, want.through, want.why)
			continue
		}
		t.Logf("KNOWN DIFFERENCE %s: direct %s, through fray %s: %s", k, d.Status, f.Status, want.why)
		delete(direct, k)
		delete(through, k)
	}
	if diff := verdictTable(direct, through, true); diff != "" {
		t.Errorf("conformance results differ through fray:\n%s\nexchanges at fray: %d", diff, len(fray.exchanges()))
	}
}

// runConformance runs `conformance server --suite all` against url and
// reads the checks.json files it writes.
func runConformance(ctx context.Context, t *testing.T, env nodepeer.Env, url string) verdicts {
	t.Helper()
	out := t.TempDir()
	stdout, stderr, err := env.Run(ctx, "--import", "./compat/register.mjs", conformanceCLI,
		"server", "--url", url, "--suite", "all", "--output-dir", out)
	// The CLI exits non-zero when a check fails; that is a result, not an
	// error, as long as it wrote its checks.
	v, rerr := readVerdicts(out)
	if rerr != nil || len(v) == 0 {
		t.Fatalf("conformance against %s: %v (exit: %v)\nstdout:\n%s\nstderr:\n%s", url, rerr, err, stdout, stderr)
	}
	return v
}

// resultDir matches the directories the CLI writes:
// server-<scenario>-<ISO timestamp with - for :>.
var resultDir = regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$`)

func readVerdicts(dir string) (verdicts, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*", "checks.json"))
	if err != nil {
		return nil, fmt.Errorf("list results: %w", err)
	}
	v := verdicts{}
	for _, f := range files {
		m := resultDir.FindStringSubmatch(filepath.Base(filepath.Dir(f)))
		if m == nil {
			return nil, fmt.Errorf("unexpected result directory %s", filepath.Dir(f))
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f, err)
		}
		var checks []check
		if err := json.Unmarshal(data, &checks); err != nil {
			return nil, fmt.Errorf("parse %s: %w", f, err)
		}
		seen := map[string]int{}
		for _, c := range checks {
			switch c.Status {
			case "SUCCESS", "WARNING", "FAILURE":
			case "INFO":
				continue
			default:
				return nil, fmt.Errorf("%s: check %s has unknown status %q", f, c.ID, c.Status)
			}
			k := checkKey{Scenario: m[1], ID: c.ID, N: seen[c.ID]}
			seen[c.ID]++
			v[k] = c
		}
	}
	return v, nil
}

// sortedKeys returns the checks of every set, each once, in name order.
func sortedKeys(sets ...verdicts) []checkKey {
	all := verdicts{}
	for _, s := range sets {
		maps.Copy(all, s)
	}
	return slices.SortedFunc(maps.Keys(all), func(a, b checkKey) int { return strings.Compare(a.String(), b.String()) })
}

// verdictTable lists every check's status in both runs; with diff, only
// those whose status differs, or that only one run has, with the error
// messages, and "" when the runs are identical.
func verdictTable(direct, through verdicts, diff bool) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	if diff {
		fmt.Fprintln(tw, "  CHECK\tDIRECT\tTHROUGH FRAY\tMESSAGE (through fray / direct)")
	} else {
		fmt.Fprintln(tw, "  CHECK\tDIRECT\tTHROUGH FRAY")
	}
	n := 0
	for _, k := range sortedKeys(direct, through) {
		d, dok := direct[k]
		f, fok := through[k]
		switch {
		case !diff:
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", k, statusOr(d, dok), statusOr(f, fok))
		case !dok || !fok || d.Status != f.Status:
			n++
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", k, statusOr(d, dok), statusOr(f, fok), cmp.Or(f.ErrorMessage, d.ErrorMessage))
		}
	}
	tw.Flush()
	if diff && n == 0 {
		return ""
	}
	return b.String()
}

func statusOr(c check, ok bool) string {
	if !ok {
		return "(absent)"
	}
	return c.Status
}
