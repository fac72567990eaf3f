package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/urfave/cli/v2"
)

// commandPaths lists every command of the app, subcommands included, as
// the words that name it on a command line.
func commandPaths(prefix []string, cmds []*cli.Command) [][]string {
	var out [][]string
	for _, c := range cmds {
		if c.Name == "help" {
			continue
		}
		p := append(append([]string(nil), prefix...), c.Name)
		out = append(out, p)
		out = append(out, commandPaths(p, c.Subcommands)...)
	}
	return out
}

// quick is the time limit of a command that should fail or answer at once.
const quick = 10 * time.Second

// TestEveryCommandBadFlagExits2: whatever the command, at whatever depth,
// an unknown flag is a usage error: exit 2, one line naming the flag, and
// not the command's whole help.
func TestEveryCommandBadFlagExits2(t *testing.T) {
	paths := commandPaths(nil, newApp(io.Discard, io.Discard).Commands)
	if len(paths) < 11 {
		t.Fatalf("found only %d commands: %q", len(paths), paths)
	}
	for _, p := range paths {
		args := append(p, "--no-such-flag")
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, stdout, stderr := runFray(t, quick, args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, exitUsage, stderr)
			}
			if !strings.Contains(stderr, "no-such-flag") {
				t.Errorf("stderr does not name the flag:\n%s", stderr)
			}
			if strings.Contains(stdout+stderr, "USAGE:") {
				t.Errorf("a bad flag printed the whole help:\n%s%s", stdout, stderr)
			}
		})
	}
}

// TestEveryCommandBadArgumentExits2: a missing, extra, unknown or bad
// argument or flag value is a usage error too, with a message that names
// the thing and the value or says what the command needs; bad flags exit 2
// before anything runs (a baseline that cannot be used, before fray
// listens).
func TestEveryCommandBadArgumentExits2(t *testing.T) {
	dir := t.TempDir()
	bad := writeFile(t, filepath.Join(dir, "bad.yml"), "server:\n  - server.priming-evnt\n")
	const up = "http://127.0.0.1:1/mcp"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"nosuch"}, `unknown command "nosuch"; see fray --help`},
		{[]string{"prxy"}, `unknown command "prxy" (did you mean "proxy"?)`},
		{[]string{"help", "nosuch"}, "nosuch"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "extra"}, `proxy takes no arguments, got ["extra"]`},
		{[]string{"proxy"}, "needs --upstream"},
		{[]string{"proxy", "--upstream", "ftp://h"}, `"ftp://h": scheme must be http or https`},
		{[]string{"proxy", "--upstream", "::bad"}, `upstream "::bad"`},
		{[]string{"proxy", "--upstream", "http://"}, `"http://": no host`},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--bogus"}, "-bogus"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--log-level", "loud"}, `--log-level "loud"`},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--log-format", "xml"}, `--log-format "xml"`},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--listen", "127.0.0.1:99999"}, `--listen "127.0.0.1:99999"`},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--tls-cert", "c.pem"}, "needs both --tls-cert and --tls-key"},
		{[]string{"proxy", "--upstream", "https://127.0.0.1:1", "--upstream-ca", "/nonexistent.pem"}, "/nonexistent.pem"},
		{[]string{"run", "--upstream", "http://127.0.0.1:1/mcp"}, "run needs a client command"},
		{[]string{"demo", "extra"}, `demo takes no arguments, got ["extra"]`},
		{[]string{"demo", "--profile", "polling-sever"}, `unknown profile "polling-sever" (did you mean "polling-server"?)`},
		{[]string{"check"}, "check needs the trace file of a run: fray check TRACE"},
		{[]string{"check", "a", "b"}, `check takes one trace file, got 2: ["a" "b"]`},
		{[]string{"report"}, "report needs a trace file"},
		{[]string{"report", "merge"}, "report merge needs the JSON reports"},
		{[]string{"replay"}, "replay needs the trace file of a run"},
		{[]string{"profiles", "bogus"}, `unknown command "bogus"; see fray profiles --help`},
		{[]string{"profiles", "lst"}, `unknown command "lst" (did you mean "list"?)`},
		{[]string{"profiles", "list", "extra"}, `fray profiles list takes no arguments`},
		{[]string{"profiles", "kinds", "extra"}, `fray profiles kinds takes no arguments`},
		{[]string{"profiles", "show"}, "give one profile name or file"},
		{[]string{"profiles", "validate"}, "give at least one profile file"},
		{[]string{"version", "extra"}, `version takes no arguments`},
		{[]string{"run", "--", "true"}, "needs --upstream"},
		{[]string{"run", "--upstream", "ftp://h/mcp", "--", "true"}, "scheme must be http or https"},
		{[]string{"run", "--upstream", up, "--profile", "no-such-profile", "--", "true"}, "no-such-profile"},
		{[]string{"run", "--upstream", up, "--wait", "0s", "--", "true"}, "--wait"},
		{[]string{"run", "--upstream", up, "--listen", "127.0.0.1:99999", "--", "true"}, "--listen"},
		{[]string{"run", "--probe", "nope", "--", "true"}, `no probe "nope"`},
		{[]string{"run", "--probe", "all", "--profile", "soak", "--", "true"}, "drop --profile"},
		{[]string{"run", "--probe", "all", "--seed", "3", "--", "true"}, "drop --seed"},
		{[]string{"run", "--probe", "all", "--", "true"}, "run needs --upstream"},
		{[]string{"demo", "--profile", "no-such-profile"}, "no-such-profile"},
		{[]string{"demo", "--profile", ""}, "fray profiles list"}, // says what to give, not a crash
		{[]string{"probes", "show", "resume-token-droped"}, "did you mean"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--report-every", "1s"}, "needs --report FILE"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--report", "r.json", "--report-every", "0s"}, "positive interval"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--listen", "127.0.0.1:0", "--report", "-", "--junit", "-"},
			"--report and --junit: only one of them can go to stdout"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--listen", "127.0.0.1:0", "--baseline", bad},
			fmt.Sprintf(`--baseline: baseline %s line 2: "server.priming-evnt" is not a fray check id (did you mean "server.priming-event"?)`, bad)},
		{[]string{"check", "run.jsonl", "--baseline", filepath.Join(dir, "none.yml")}, "none.yml: no such file or directory (start with an empty file"},
		{[]string{"run", "--upstream", up, "--baseline", bad, "--", "true"}, bad + " line 2"},
		{[]string{"sweep", "--upstream", up}, "sweep needs a client command"},
		{[]string{"sweep", "--", "true"}, "sweep needs --upstream"},
		{[]string{"sweep", "--upstream", up, "--max-runs", "0", "--", "true"}, "--max-runs 0"},
		{[]string{"sweep", "--upstream", up, "--max-events", "-1", "--", "true"}, "--max-events -1"},
		{[]string{"sweep", "--upstream", up, "--fresh-server", "--", "true"}, "give --server CMD too"},
		{[]string{"sweep", "--upstream", up, "--junit", filepath.Join(dir, "no", "x.xml"), "--", "true"}, "does not exist"},
		{[]string{"shrink", "--upstream", up, "--", "true"}, "shrink needs --reproduce TRACE"},
		{[]string{"shrink", "--reproduce", filepath.Join(dir, "none.jsonl"), "--upstream", up, "--", "true"}, "none.jsonl"},
		{[]string{"shrink", "--reproduce", filepath.Join(dir, "none.jsonl"), "--out", filepath.Join(dir, "no", "x.toml"), "--upstream", up, "--", "true"}, "does not exist"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := runFray(t, quick, tc.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, exitUsage, stderr)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr does not say %q:\n%s", tc.want, stderr)
			}
		})
	}
}

// TestProfilesShowUnknownIsOneLine: a mistyped built-in name gets one line
// that names the likely one, without a package prefix.
func TestProfilesShowUnknownIsOneLine(t *testing.T) {
	code, stdout, stderr := runFray(t, quick, "profiles", "show", "lossy")
	if code != exitUsage || stdout != "" {
		t.Fatalf("exit %d, stdout %q", code, stdout)
	}
	want := `fray: profiles show: unknown profile "lossy" (did you mean "lossy-resume"?); the built-ins are `
	if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, want) {
		t.Errorf("stderr %q, want one line beginning %q", stderr, want)
	}
}

// TestVersionFlag: fray --version says what fray version says.
func TestVersionFlag(t *testing.T) {
	code, flag, _ := runFray(t, quick, "--version")
	cmdCode, cmd, _ := runFray(t, quick, "version")
	if code != 0 || cmdCode != 0 || flag != cmd || !strings.HasPrefix(flag, "fray ") {
		t.Fatalf("fray --version: exit %d, %q; fray version: exit %d, %q", code, flag, cmdCode, cmd)
	}
}

// TestSeedHelpNamesNoFalseDefault: --seed has no default of its own; the
// help must not claim 0.
func TestSeedHelpNamesNoFalseDefault(t *testing.T) {
	for _, cmd := range []string{"proxy", "run", "demo", "replay"} {
		_, stdout, _ := runFray(t, quick, cmd, "--help")
		i := strings.Index(stdout, "   --seed ")
		if i < 0 {
			t.Fatalf("fray %s --help has no --seed:\n%s", cmd, stdout)
		}
		line, _, _ := strings.Cut(stdout[i:], "\n")
		if strings.Contains(line, "default: 0") || !strings.Contains(line, "default: the profile's seed") {
			t.Errorf("fray %s --help: %q", cmd, line)
		}
	}
}

// TestCompletion: the shell's completion asks fray for the words it may
// offer; the commands are among them. urfave/cli reads the words before
// the last from os.Args, so the test sets them as a shell would.
func TestCompletion(t *testing.T) {
	defer func(args []string) { os.Args = args }(os.Args)
	os.Args = []string{"fray", "--generate-bash-completion"}
	code, stdout, _ := runFray(t, quick, "--generate-bash-completion")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, w := range []string{"proxy", "run", "demo", "check", "profiles"} {
		if !strings.Contains(stdout, w+"\n") {
			t.Errorf("completion does not offer %q:\n%s", w, stdout)
		}
	}
	os.Args = []string{"fray", "profiles", "--generate-bash-completion"}
	_, stdout, _ = runFray(t, quick, "profiles", "--generate-bash-completion")
	if !strings.Contains(stdout, "show\n") {
		t.Errorf("profiles completion does not offer show:\n%s", stdout)
	}
}

// TestEveryHelpFitsATerminal: fray --help and every command's --help, at
// every depth, fit one terminal screen, and each shows an example.
func TestEveryHelpFitsATerminal(t *testing.T) {
	paths := append([][]string{nil}, commandPaths(nil, newApp(io.Discard, io.Discard).Commands)...)
	for _, p := range paths {
		args := append(append([]string(nil), p...), "--help")
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, stdout, stderr := runFray(t, quick, args...)
			if code != exitOK || stdout == "" {
				t.Fatalf("exit %d; stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
			if len(lines) > helpLines {
				t.Errorf("%d lines, want at most %d:\n%s", len(lines), helpLines, stdout)
			}
			for _, l := range lines {
				if n := utf8.RuneCountInString(l); n > helpWidth {
					t.Errorf("line of %d columns, want at most %d: %q", n, helpWidth, l)
				}
			}
			if !strings.Contains(stdout, "example:") {
				t.Errorf("no example:\n%s", stdout)
			}
		})
	}
}
