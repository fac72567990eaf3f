// Package browsertest runs headless Chromium for the tests that check what
// a browser makes of fray's pages and APIs. Without Chromium on the PATH a
// test fails, unless FRAY_BROWSERS_OPTIONAL is set, when it is skipped
// with a loud SKIPPED: CI installs Chromium, so there the browser tests
// always run.
package browsertest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Optional names the environment variable that lets a browser test skip
// where no Chromium is installed.
const Optional = "FRAY_BROWSERS_OPTIONAL"

// Chromium finds a Chromium binary, or skips or fails t; what says what
// would go untested, for the skip message.
func Chromium(t testing.TB, what string) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv(Optional) != "" {
		t.Skipf("SKIPPED: no chromium on PATH and %s is set; %s", Optional, what)
	}
	t.Fatalf("no chromium on PATH (install Debian's chromium, as .ci/run does, or set %s=1 to skip)", Optional)
	return ""
}

// Headless runs bin headless on target (a URL) with args, in a profile
// directory of its own, within 90 s, and returns its stdout; it fails t
// when Chromium does.
func Headless(t testing.TB, bin, target string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--disable-extensions",
		"--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(append(base, args...), target)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstderr:\n%s", bin, strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes()
}
