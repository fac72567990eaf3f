package main

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// runProfiles runs `fray profiles ARGS...` and returns stdout, stderr and
// the error.
func runProfiles(args ...string) (string, string, error) {
	var out, errOut bytes.Buffer
	app := &cli.App{
		Writer: &out, ErrWriter: &errOut,
		Commands:       []*cli.Command{profilesCommand()},
		ExitErrHandler: func(*cli.Context, error) {},
	}
	err := app.Run(append([]string{"fray", "profiles"}, args...))
	return out.String(), errOut.String(), err
}

// exitCode is the exit code err asks for: exitOK for nil, -1 for an error
// that asks for none.
func exitCode(err error) int {
	var ec cli.ExitCoder
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ec):
		return ec.ExitCode()
	}
	return -1
}

func TestProfilesList(t *testing.T) {
	out, _, err := runProfiles("list")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"polling-server", "lossy-resume", "soak"} {
		if !strings.Contains(out, name+" ") {
			t.Errorf("list lacks %s:\n%s", name, out)
		}
	}
}

func TestProfilesShow(t *testing.T) {
	out, _, err := runProfiles("show", "lossy-resume")
	if err != nil || !strings.Contains(out, `kind = "lose"`) {
		t.Errorf("show: %v\n%s", err, out)
	}
	_, _, err = runProfiles("show", "no-such-profile")
	if exitCode(err) != 2 {
		t.Errorf("show of an unknown profile: %v (code %d), want exit 2", err, exitCode(err))
	}
}

func TestProfilesValidate(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.toml")
	bad := filepath.Join(dir, "bad.toml")
	for file, text := range map[string]string{
		good: "[[fault]]\nkind = \"drop\"\n",
		bad:  "[[fault]]\nkind = \"delay\"\ndelay = \"fast\"\nprobabilty = 1\n",
	} {
		writeFile(t, file, text)
	}

	out, _, err := runProfiles("validate", good)
	if err != nil || !strings.Contains(out, "good.toml: ok") {
		t.Errorf("valid file: %v\n%s", err, out)
	}
	_, stderr, err := runProfiles("validate", good, bad)
	if exitCode(err) != 2 {
		t.Fatalf("invalid file: %v (code %d), want exit 2", err, exitCode(err))
	}
	for _, want := range []string{
		bad + `:3:9: fault[0].delay: "fast" is not a duration`,
		bad + `:4:1: fault[0].probabilty: unknown key`,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if _, _, err := runProfiles("validate"); exitCode(err) != 2 {
		t.Errorf("no files: %v, want exit 2", err)
	}
}

func TestProfilesKinds(t *testing.T) {
	out, _, err := runProfiles("kinds")
	if err != nil || !strings.Contains(out, "rewrite-last-event-id") || !strings.Contains(out, "request_method") {
		t.Errorf("kinds: %v\n%s", err, out)
	}
}

// TestValidateFiveMistakes: five different mistakes in one file give five
// errors, each with line and column, and exit code 2.
func TestValidateFiveMistakes(t *testing.T) {
	file := filepath.Join("..", "..", "profiles", "testdata", "five-mistakes.toml")
	_, stderr, err := runProfiles("validate", file)
	if exitCode(err) != 2 {
		t.Fatalf("exit %d, want 2", exitCode(err))
	}
	var positioned int
	for _, line := range strings.Split(stderr, "\n") {
		rest, ok := strings.CutPrefix(line, file+":")
		if !ok {
			continue
		}
		parts := strings.SplitN(rest, ":", 3)
		if len(parts) == 3 && parts[0] != "" && parts[1] != "" && strings.Trim(parts[0]+parts[1], "0123456789") == "" {
			positioned++
		}
	}
	if positioned != 5 {
		t.Fatalf("%d positioned errors, want 5:\n%s", positioned, stderr)
	}
}
