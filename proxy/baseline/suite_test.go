package baseline_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/frayproxy/fray/proxy/baseline"
)

// loadExpectedFailures is the conformance suite's own reading of an
// expected-failures file (src/expected-failures.ts of
// @modelcontextprotocol/conformance 0.1.16), with the YAML parser the
// suite depends on, as examples/node installs it: one JSON line per file
// named on the command line, or the suite's error.
const loadExpectedFailures = `
import { parse } from 'yaml';
import { readFileSync } from 'fs';
for (const f of process.argv.slice(1)) {
  try {
    const parsed = parse(readFileSync(f, 'utf-8'));
    const result = {};
    if (parsed !== null && parsed !== undefined) {
      if (typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error("expected an object with 'server' and/or 'client' keys");
      for (const k of ['server', 'client']) {
        if (parsed[k] === undefined) continue;
        if (!Array.isArray(parsed[k])) throw new Error("'" + k + "' must be an array of scenario names");
        result[k] = parsed[k].map(String);
      }
    }
    console.log(JSON.stringify(result));
  } catch (e) {
    console.log(JSON.stringify({ error: String(e.message) }));
  }
}
`

// shownBaselines are the baseline files a reader copies: the example of
// examples/ci and the yaml blocks of the docs that are baselines.
func shownBaselines(t *testing.T, dir string) []string {
	t.Helper()
	root := filepath.Join("..", "..")
	files := []string{filepath.Join(root, "examples", "ci", "fray-baseline.yml")}
	block := regexp.MustCompile("(?s)```yaml\n(server:.*?)```\n")
	for _, doc := range []string{"reports.md", "ci.md"} {
		b, err := os.ReadFile(filepath.Join(root, "docs", doc))
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range block.FindAllSubmatch(b, -1) {
			f := filepath.Join(dir, doc+"-"+string(rune('a'+i))+".yml")
			if err := os.WriteFile(f, m[1], 0o644); err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
	}
	if len(files) < 3 {
		t.Fatalf("found %d baselines in the docs and examples, want the example and one in each of reports.md and ci.md", len(files))
	}
	return files
}

// TestTheSuiteReadsTheSameEntries: every baseline fray accepts, as the
// conformance suite's own code reads it, holds the same entries in the
// same lists: the file is one a user of the suite already knows how to
// write, and fray's reading of the YAML agrees with a real parser's.
func TestTheSuiteReadsTheSameEntries(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("SKIPPED: node not found on PATH; the suite's reading was not compared")
	}
	nodeDir, err := filepath.Abs(filepath.Join("..", "..", "examples", "node"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(nodeDir, "node_modules", "yaml", "package.json")); err != nil {
		t.Skip("SKIPPED: examples/node/node_modules is not installed (npm ci there)")
	}
	dir := t.TempDir()
	files := shownBaselines(t, dir)
	for i, text := range []string{
		"",
		"# nothing yet\n",
		"server: []\nclient: []\n",
		"---\nserver:\n  - 'server.priming-event'   # quoted, single\n  - \"e2e.no-message-lost\" # quoted, double\n",
		"client:\n  - lossy-resume:client.backoff\n  - client.retry-honoured\t# a tab before it\n",
		"server:\n- server.priming-event\nclient:\n-   client.backoff\n",
		"\r\nserver:\r\n  - server.priming-event\r\n",
	} {
		f := filepath.Join(dir, "case-"+string(rune('a'+i))+".yml")
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	cmd := exec.Command(node, append([]string{"--input-type=module", "-e", loadExpectedFailures}, files...)...)
	cmd.Dir = nodeDir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(files) {
		t.Fatalf("node read %d files of %d:\n%s", len(lines), len(files), out)
	}
	for i, f := range files {
		var suite struct {
			Server, Client []string
			Error          string
		}
		if err := json.Unmarshal([]byte(lines[i]), &suite); err != nil {
			t.Fatalf("%s: %v", lines[i], err)
		}
		entries, err := baseline.Read(f)
		if err != nil {
			t.Errorf("%s: fray refuses it: %v", filepath.Base(f), err)
			continue
		}
		if suite.Error != "" {
			t.Errorf("%s: the suite refuses it: %s", filepath.Base(f), suite.Error)
			continue
		}
		var fray, want []string
		for _, e := range entries {
			fray = append(fray, e.Entry())
		}
		want = append(append(want, suite.Server...), suite.Client...)
		if strings.Join(fray, " ") != strings.Join(want, " ") {
			t.Errorf("%s: fray reads %q, the suite %q", filepath.Base(f), fray, want)
		}
	}
	t.Logf("%d baselines read alike", len(files))
}
