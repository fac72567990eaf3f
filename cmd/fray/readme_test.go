package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/frayproxy/fray/examples/gosdk/refpeer"
)

// root is the repository's root, from this package's directory.
var root = filepath.Join("..", "..")

// shownFiles are the files whose shell commands a reader copies: the
// README, the pages of docs/, and the CI workflow.
func shownFiles(t *testing.T) []string {
	t.Helper()
	return append(pages(t), filepath.Join(root, "examples", "ci", "github-actions.yml"))
}

// shownCommand is one command line as a reader would paste it.
type shownCommand struct {
	where string // file:line
	words []string
}

// shellCommands returns the command lines of a Markdown file's ```sh
// blocks, or of every line of any other file: continuation lines joined,
// comments and a trailing & removed, split into words as sh would.
func shellCommands(t *testing.T, path string) []shownCommand {
	t.Helper()
	b := readFile(t, path)
	markdown := strings.HasSuffix(path, ".md")
	var out []shownCommand
	in := !markdown
	pending, start := "", 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if markdown && strings.HasPrefix(trimmed, "```") {
			in = trimmed == "```sh"
			continue
		}
		if !in {
			continue
		}
		if pending == "" {
			start = n
		}
		if s, ok := strings.CutSuffix(trimmed, `\`); ok {
			pending += s + " "
			continue
		}
		cmd := pending + trimmed
		pending = ""
		if !markdown { // a workflow's one-line step: run: COMMAND
			cmd = strings.TrimPrefix(cmd, "run: ")
		}
		words, err := shellWords(cmd)
		if err != nil {
			t.Errorf("%s:%d: %v", path, start, err)
			continue
		}
		if len(words) > 0 && words[len(words)-1] == "&" {
			words = words[:len(words)-1]
		}
		if len(words) > 0 {
			out = append(out, shownCommand{fmt.Sprintf("%s:%d", path, start), words})
		}
	}
	return out
}

// shellWords splits a line into words as sh does for the quoting fray's
// examples use: single and double quotes, backslash escapes, and a # that
// begins a word starting a comment.
func shellWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '#' && !inWord:
			return words, nil
		case c == '\'' || c == '"':
			j := strings.IndexByte(line[i+1:], c)
			if j < 0 {
				return nil, fmt.Errorf("unclosed %c in %q", c, line)
			}
			cur.WriteString(line[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '\\' && i+1 < len(line):
			cur.WriteByte(line[i+1])
			i++
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// frayArgs returns the arguments of a fray command line (fray ARGS, or go
// run ./cmd/fray ARGS), and whether it is one.
func frayArgs(words []string) ([]string, bool) {
	switch {
	case words[0] == "fray":
		return words[1:], true
	case len(words) >= 2 && words[0] == "npx" && (words[1] == "fray" || words[1] == "@frayproxy/fray"):
		return words[2:], true
	case len(words) >= 3 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/fray":
		return words[3:], true
	}
	return nil, false
}

// dryApp is fray's command line with every command that would serve,
// start processes or read run files replaced by the checks it makes of
// its flags and arguments before doing so. The commands that only print
// (fray version, fray profiles ...) run as they are.
func dryApp() *cli.App {
	app := newApp(io.Discard, io.Discard)
	outputs := func(c *cli.Context) error {
		// A baseline the docs name is a file of the repository: read it.
		if p := c.String("baseline"); p != "" && !filepath.IsAbs(p) {
			if err := c.Set("baseline", filepath.Join(root, p)); err != nil {
				return err
			}
		}
		_, err := newOutputs(c, io.Discard)
		return err
	}
	trace := func(c *cli.Context, name string) error {
		_, err := traceArg(c, name+" needs a trace file", name+" takes one trace file")
		return err
	}
	for _, cmd := range app.Commands {
		switch cmd.Name {
		case "proxy":
			cmd.Action = func(c *cli.Context) error {
				if _, err := proxySettings(c); err != nil {
					return err
				}
				if _, _, err := profileOption(c); err != nil {
					return err
				}
				return outputs(c)
			}
		case "run":
			cmd.Action = func(c *cli.Context) error {
				if _, err := runFlags(c); err != nil {
					return err
				}
				if !c.IsSet("reproduce") { // its profile is in the trace
					if _, _, err := profileOption(c); err != nil {
						return err
					}
				}
				return outputs(c)
			}
		case "sweep", "shrink":
			cmd.Action = func(c *cli.Context) error {
				if cmd.Name == "shrink" && c.String("reproduce") == "" {
					return usagef("shrink needs --reproduce TRACE")
				}
				_, err := repeatSettings(c)
				return err
			}
		case "demo":
			cmd.Action = func(c *cli.Context) error {
				if _, _, err := profileOption(c); err != nil {
					return err
				}
				return outputs(c)
			}
		case "check":
			cmd.Action = func(c *cli.Context) error {
				if err := trace(c, "check"); err != nil {
					return err
				}
				return outputs(c)
			}
		case "replay":
			cmd.Action = func(c *cli.Context) error { return trace(c, "replay") }
		case "report":
			cmd.Action = func(c *cli.Context) error {
				if err := trace(c, "report"); err != nil {
					return err
				}
				if c.String("html") == "" {
					return usagef("report TRACE needs --html FILE")
				}
				return nil
			}
			for _, sub := range cmd.Subcommands {
				sub.Action = func(c *cli.Context) error {
					args, err := positional(c)
					if err != nil {
						return err
					}
					if len(args) == 0 {
						return usagef("merge needs reports")
					}
					return outputs(c)
				}
			}
		}
	}
	return app
}

// TestShownCommandsParse runs every fray command line of the README, the
// docs and the CI workflow through fray's command line: its command,
// subcommand and flags must exist, its values parse, and the checks the
// command makes before it starts anything pass (a built-in profile that
// exists, --report-every with --report, a client command after --, one
// trace file). The commands that only print run as they are. Paths a
// `go run` or `go test` line names must exist.
func TestShownCommandsParse(t *testing.T) {
	checked := 0
	for _, path := range shownFiles(t) {
		for _, c := range shellCommands(t, path) {
			if args, ok := frayArgs(c.words); ok {
				checked++
				err := dryApp().RunContext(context.Background(), append([]string{"fray"}, args...))
				if err != nil {
					t.Errorf("%s: fray %s: %v", c.where, strings.Join(args, " "), err)
				}
				continue
			}
			if c.words[0] == "go" && len(c.words) > 2 && (c.words[1] == "run" || c.words[1] == "test" || c.words[1] == "build" || c.words[1] == "install") {
				for _, w := range c.words[2:] {
					if !strings.HasPrefix(w, "./") {
						continue
					}
					dir := filepath.Join(root, strings.TrimSuffix(strings.TrimSuffix(w, "..."), "/"))
					if _, err := os.Stat(dir); err != nil {
						t.Errorf("%s: %s names %s: %v", c.where, strings.Join(c.words, " "), w, err)
					}
				}
			}
		}
	}
	t.Logf("%d fray command lines checked", checked)
	if checked < 20 {
		t.Errorf("only %d fray command lines found in the README, docs and CI workflow", checked)
	}
}

// TestShownCommandsCatchMistakes keeps TestShownCommandsParse honest: the
// dry command line refuses what the real one refuses.
func TestShownCommandsCatchMistakes(t *testing.T) {
	for _, args := range [][]string{
		{"proxy", "--upstream", "http://127.0.0.1:3000", "--profle", "soak"},
		{"proxy", "--upstream", "http://127.0.0.1:3000", "--profile", "soaking"},
		{"proxy", "--upstream", "http://127.0.0.1:3000", "--report-every", "1m"},
		{"proxy", "--listen", "127.0.0.1:7070"},
		{"run", "--upstream", "http://127.0.0.1:3000/mcp", "--wait", "soon", "--", "true"},
		{"run", "--upstream", "http://127.0.0.1:3000/mcp"},
		{"check"},
		{"report", "run.jsonl.gz"},
		{"profiles", "show", "nosuch"},
		{"nosuch"},
	} {
		if err := dryApp().RunContext(context.Background(), append([]string{"fray"}, args...)); err == nil {
			t.Errorf("fray %s: accepted", strings.Join(args, " "))
		}
	}
}

// TestREADMEKeepsTheCITestCommand: the README shows the test command
// .ci/run runs, word for word.
func TestREADMEKeepsTheCITestCommand(t *testing.T) {
	const cmd = "go test -race -timeout 12m ./..."
	for _, f := range []string{"README.md", filepath.Join(".ci", "run")} {
		b := readFile(t, filepath.Join(root, f))
		if !bytes.Contains(b, []byte("\n"+cmd+"\n")) {
			t.Errorf("%s does not run %q on a line of its own", f, cmd)
		}
	}
}

// TestCIExampleIsShownWhole: docs/ci.md shows the workflow file as it is.
func TestCIExampleIsShownWhole(t *testing.T) {
	file := readFile(t, filepath.Join(root, "examples", "ci", "github-actions.yml"))
	doc := readFile(t, filepath.Join(root, "docs", "ci.md"))
	if !bytes.Contains(doc, append(append([]byte("```yaml\n"), file...), "```\n"...)) {
		t.Error("docs/ci.md's yaml block is not examples/ci/github-actions.yml as it is")
	}
}

// TestREADMETutorial runs the README's tutorial: its fray proxy command
// line, as shown, in front of the reference server of examples/gosdk,
// with the reference client going through it, then stops fray as Ctrl-C
// would and reads the verdict. Only the two fixed ports are swapped for
// free ones, so that the test never collides with a fray a reader runs.
func TestREADMETutorial(t *testing.T) {
	tutorial := readmeSection(t, "Tutorial")
	var args []string
	for _, c := range shellCommands(t, filepath.Join(root, "README.md")) {
		if a, ok := frayArgs(c.words); ok && a[0] == "proxy" && strings.Contains(tutorial, strings.Join(c.words, " ")) {
			args = a
		}
	}
	for _, want := range []string{"go run ./examples/gosdk/server -listen 127.0.0.1:3000", "go run ./examples/gosdk/client http://127.0.0.1:7070/mcp"} {
		if !strings.Contains(tutorial, want) {
			t.Errorf("the tutorial no longer runs %q; update this test with it", want)
		}
	}
	if args == nil {
		t.Fatal("the tutorial shows no fray proxy command")
	}

	code, summary, res, err := proxyRefPair(t, func(upstream string) []string {
		for i, a := range args {
			a = strings.ReplaceAll(a, "http://127.0.0.1:3000", upstream)
			args[i] = strings.ReplaceAll(a, "127.0.0.1:7070", "127.0.0.1:0")
		}
		return args
	}, refpeer.ClientOptions{RequireResume: true})
	if err != nil {
		t.Fatalf("the tutorial's client failed through fray: %v (%+v)", err, res)
	}
	if code != exitOK || !strings.Contains(summary, "fray: verdict PASS (profile polling-server") {
		t.Errorf("exit %d, summary:\n%s", code, summary)
	}
}

// readmeSection is the README's text after the heading that begins
// "## "+heading, up to the next heading of that level.
func readmeSection(t *testing.T, heading string) string {
	t.Helper()
	_, sec, ok := strings.Cut(string(readFile(t, filepath.Join(root, "README.md"))), "\n## "+heading)
	if !ok {
		t.Fatalf("README.md has no %s section", heading)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	return sec
}

// TestREADMECIRecipe runs the README's CI recipe as shown: it builds the
// Go SDK example server and client, runs the client through fray run with
// the server (on a free port in place of 3000), and draws the timeline;
// the verdict passes and every file the workflow uploads is there.
func TestREADMECIRecipe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the example peers; not in -short")
	}
	b := readFile(t, filepath.Join(root, "README.md"))
	// The CI section's lines: from "## CI" to the next "## ".
	from, to := 0, 0
	for n, line := range strings.Split(string(b), "\n") {
		switch {
		case line == "## CI":
			from = n + 1
		case from > 0 && to == 0 && strings.HasPrefix(line, "## "):
			to = n + 1
		}
	}
	if from == 0 {
		t.Fatal("README.md has no CI section")
	}
	var lines [][]string
	for _, c := range shellCommands(t, filepath.Join(root, "README.md")) {
		_, at, _ := strings.Cut(c.where, ":")
		if n, _ := strconv.Atoi(at); n > from && (to == 0 || n < to) {
			lines = append(lines, c.words)
		}
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin") + string(filepath.Separator)
	port := strconv.Itoa(freePort(t))
	ran := 0
	for _, words := range lines {
		for i, w := range words {
			w = strings.ReplaceAll(w, "bin/", bin)
			words[i] = strings.ReplaceAll(w, "127.0.0.1:3000", "127.0.0.1:"+port)
		}
		switch {
		case len(words) > 1 && words[0] == "go" && words[1] == "install":
			// fray itself: run in-process below.
		case len(words) > 1 && words[0] == "go" && words[1] == "build":
			cmd := exec.Command("go", words[1:]...)
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", strings.Join(words, " "), err, out)
			}
			ran++
		default:
			args, ok := frayArgs(words)
			if !ok {
				t.Fatalf("the CI recipe runs %q, which this test does not know", strings.Join(words, " "))
			}
			t.Chdir(dir)
			code, stdout, stderr := runFray(t, 2*time.Minute, args...)
			if code != exitOK {
				t.Fatalf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(words, " "), code, stdout, stderr)
			}
			ran++
		}
	}
	if ran < 3 {
		t.Fatalf("ran %d of the CI recipe's commands, want the build, fray run and fray report", ran)
	}
	for _, f := range []string{"fray.xml", "fray.json", "fray.jsonl.gz", "fray.html"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the recipe left no %s: %v", f, err)
		}
	}
}
