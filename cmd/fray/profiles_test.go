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

// TestProfilesCommands: fray profiles list names the built-ins, show
// prints one's faults and refuses an unknown one with exit 2, kinds
// names the fault kinds and their selectors.
func TestProfilesCommands(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"list"}, exitOK, []string{"polling-server ", "lossy-resume ", "soak "}},
		{[]string{"show", "lossy-resume"}, exitOK, []string{`kind = "lose"`}},
		{[]string{"show", "no-such-profile"}, exitUsage, nil},
		{[]string{"kinds"}, exitOK, []string{"rewrite-last-event-id", "request_method"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, _, err := runProfiles(tc.args...)
			if code := exitCode(err); code != tc.code || tc.code == exitOK && err != nil {
				t.Fatalf("%v (code %d), want exit %d", err, code, tc.code)
			}
			for _, want := range tc.want {
				if !strings.Contains(out, want) {
					t.Errorf("stdout lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

func TestProfilesValidate(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, filepath.Join(dir, "good.toml"), "[[fault]]\nkind = \"drop\"\n")
	bad := writeFile(t, filepath.Join(dir, "bad.toml"),
		"[[fault]]\nkind = \"delay\"\ndelay = \"fast\"\nprobabilty = 1\n")

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
