package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADMEInstall holds the README's install lines to what they
// install: the module path of go install, the npm package and its
// command, the clone's go install, which it runs; the npm package itself
// is installed and run by TestNPMPackages, the release binaries by it
// too.
func TestREADMEInstall(t *testing.T) {
	sec := readmeSection(t, "Install\n")
	gomod := readFile(t, filepath.Join(root, "go.mod"))
	var mod string
	for l := range strings.Lines(string(gomod)) {
		if m, ok := strings.CutPrefix(strings.TrimSpace(l), "module "); ok {
			mod = m
		}
	}
	var wrapper struct {
		Name string            `json:"name"`
		Bin  map[string]string `json:"bin"`
	}
	b, err := os.ReadFile(filepath.Join(root, "scripts", "npm", "fray", "package.json"))
	if err == nil {
		err = json.Unmarshal(b, &wrapper)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"go install " + mod + "/cmd/fray@latest",
		"npm install --save-dev " + wrapper.Name,
		"npx " + wrapper.Name,
		"npx fray --version",
		"go install ./cmd/fray",
		"fray-VERSION-OS-ARCH",
		"fray-VERSION-SHA256SUMS",
	} {
		if !strings.Contains(sec, line) {
			t.Errorf("the README's install section does not say %q", line)
		}
	}
	if wrapper.Bin["fray"] == "" {
		t.Errorf("the npm package %s has no fray command: %v", wrapper.Name, wrapper.Bin)
	}
	// go install ./cmd/fray, as from a clone, into a directory of its own.
	bin := t.TempDir()
	cmd := exec.Command("go", "install", "./cmd/fray")
	cmd.Dir, cmd.Env = root, append(os.Environ(), "GOBIN="+bin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install ./cmd/fray: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(bin, "fray"), "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "fray ") {
		t.Errorf("the installed fray --version: %v, %q", err, out)
	}
	// go install MODULE/cmd/fray@latest installs this package.
	if out, err := exec.Command("go", "list", "-C", root, mod+"/cmd/fray").CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != mod+"/cmd/fray" {
		t.Errorf("go list %s/cmd/fray: %v, %s", mod, err, out)
	}
}

// TestREADMEPerformanceIsALink: the README leaves the performance figures
// to docs/performance.md, which holds them.
func TestREADMEPerformanceIsALink(t *testing.T) {
	sec := readmeSection(t, "Performance\n")
	if n := len(strings.Fields(sec)); n > 60 || !strings.Contains(sec, "(docs/performance.md)") {
		t.Errorf("the README's Performance section has %d words; want a line or two and a link to docs/performance.md:\n%s", n, sec)
	}
	doc := readFile(t, filepath.Join(root, "docs", "performance.md"))
	if !strings.Contains(string(doc), "\n## The figures\n") {
		t.Error("docs/performance.md has no ## The figures section")
	}
}

// TestContainerImage builds the image of Containerfile from a static
// binary, as the README's container line says, and runs fray --version in
// it; it needs a container engine that answers (docker or podman).
func TestContainerImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a static binary and an image")
	}
	engine := ""
	for _, e := range []string{"podman", "docker"} {
		if _, err := exec.LookPath(e); err == nil && exec.Command(e, "info").Run() == nil {
			engine = e
			break
		}
	}
	if engine == "" {
		t.Skip("SKIPPED: no container engine answers (docker info, podman info); the image was not built")
	}
	ctx := t.TempDir()
	cf := readFile(t, filepath.Join(root, "Containerfile"))
	if err := os.MkdirAll(filepath.Join(ctx, "dist"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(ctx, "Containerfile"), string(cf))
	build := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(ctx, "dist", "fray"), "./cmd/fray")
	build.Dir, build.Env = root, append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("static build: %v\n%s", err, out)
	}
	tag := "fray-test:" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))
	if out, err := exec.Command(engine, "build", "-f", filepath.Join(ctx, "Containerfile"), "-t", tag, ctx).CombinedOutput(); err != nil {
		t.Fatalf("%s build: %v\n%s", engine, err, out)
	}
	defer exec.Command(engine, "rmi", tag).Run()
	out, err := exec.Command(engine, "run", "--rm", tag, "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "fray ") {
		t.Errorf("%s run %s --version: %v, %q", engine, tag, err, out)
	}
}
