package main

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// TestDescribeBuild: the version names the module version and the commit,
// with -dirty for a changed tree; a link-time stamp wins over both.
func TestDescribeBuild(t *testing.T) {
	vcs := func(v, rev, modified string) *debug.BuildInfo {
		bi := &debug.BuildInfo{Main: debug.Module{Version: v}}
		if rev != "" {
			bi.Settings = []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
		}
		return bi
	}
	const rev = "0123456789abcdef0123456789abcdef01234567"
	for _, tc := range []struct {
		name, stamp, commit string
		bi                  *debug.BuildInfo
		want                string
	}{
		{"go install MODULE@VERSION", "", "", vcs("v0.3.0", "", ""), "v0.3.0"},
		{"go build in a clone", "", "", vcs("v0.0.0-20261129081440-0123456789ab", rev, "false"), "v0.0.0-20261129081440-0123456789ab (commit 0123456789ab)"},
		{"go build in a changed clone", "", "", vcs("v0.0.0-20261129081440-0123456789ab+dirty", rev, "true"), "v0.0.0-20261129081440-0123456789ab+dirty (commit 0123456789ab-dirty)"},
		{"no version, a commit", "", "", vcs("(devel)", rev, "false"), "(devel) (commit 0123456789ab)"},
		{"release build", "v0.3.0", "fedcba987654", vcs("(devel)", rev, "true"), "v0.3.0 (commit fedcba987654)"},
		{"stamped version, commit from the build", "v0.3.0", "", vcs("(devel)", rev, "false"), "v0.3.0 (commit 0123456789ab)"},
		{"no build information", "", "", nil, "(devel)"},
	} {
		if got := describeBuild(tc.stamp, tc.commit, tc.bi); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestVersionFromClone builds fray in a git checkout of this tree (its
// files as they are now, committed afresh), as a user who cloned it would,
// and checks that fray --version names the commit, then the commit with
// -dirty once a file changed.
func TestVersionFromClone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds fray twice")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("SKIPPED: git not found on PATH")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	files, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("SKIPPED: not a git checkout: %v", err)
	}
	clone := filepath.Join(t.TempDir(), "fray")
	for _, f := range strings.Split(strings.TrimRight(string(files), "\x00"), "\x00") {
		b, err := os.ReadFile(filepath.Join(root, f))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(clone, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(clone, f), string(b))
	}
	gitRun(t, clone, "init", "--quiet")
	gitRun(t, clone, "add", "-A")
	gitRun(t, clone, "-c", "user.name=fray", "-c", "user.email=fray@127.0.0.1", "commit", "--quiet", "--no-verify", "-m", "tree")
	head, err := exec.Command("git", "-C", clone, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	sha := strings.TrimSpace(string(head))
	version := func() string {
		exe := filepath.Join(clone, "fray-test")
		cmd := exec.Command("go", "build", "-o", exe, "./cmd/fray")
		cmd.Dir = clone
		// As a user's machine has it: VCS stamping on (the default).
		cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=auto")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build in a clone: %v\n%s", err, out)
		}
		out, err := exec.Command(exe, "--version").Output()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(exe); err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	if got, want := version(), "(commit "+sha[:12]+")"; !strings.Contains(got, want) {
		t.Errorf("fray --version in a clean clone: %q, want it to name %q", got, want)
	}
	writeFile(t, filepath.Join(clone, "README.md"), "changed\n")
	if got, want := version(), "(commit "+sha[:12]+"-dirty)"; !strings.Contains(got, want) {
		t.Errorf("fray --version in a changed clone: %q, want it to name %q", got, want)
	}
}

// gitRun runs git with args in dir, failing the test on an error.
func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}
