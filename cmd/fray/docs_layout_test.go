package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestLayoutListsEveryPackage holds architecture.md's layout table to the
// tree: every Go package of the module is listed, and every path listed
// exists.
func TestLayoutListsEveryPackage(t *testing.T) {
	text := readFile(t, filepath.Join(root, "docs", "architecture.md"))
	var listed []string
	for _, m := range regexp.MustCompile("(?m)^\\| (`[^|]+) \\|").FindAllStringSubmatch(string(text), -1) {
		for _, p := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(m[1], -1) {
			listed = append(listed, p[1])
		}
	}
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}", "github.com/frayproxy/fray/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	top, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	for dir := range strings.FieldsSeq(string(out)) {
		rel := strings.TrimPrefix(strings.TrimPrefix(dir, top), "/")
		if rel == "" {
			continue
		}
		covered := slices.ContainsFunc(listed, func(p string) bool { return rel == p })
		if !covered {
			t.Errorf("package %s is not in architecture.md's layout", rel)
		}
	}
	for _, p := range listed {
		if _, err := os.Stat(filepath.Join(top, p)); err != nil {
			t.Errorf("architecture.md lists %s, which does not exist", p)
		}
	}
}

// TestTopLevelLayout holds the tree to the layout fray was designed with:
// Go packages live beneath cmd/, proxy/, faults/, profiles/ and examples/
// only, and the top level holds nothing else but the module files, the
// README, docs/, LICENSE, CHANGELOG.md, Containerfile, scripts/ and
// dot-folders.
func TestTopLevelLayout(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}", "github.com/frayproxy/fray/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	homes := []string{"cmd", "proxy", "faults", "profiles", "examples"}
	for pkg := range strings.FieldsSeq(string(out)) {
		rel := strings.TrimPrefix(pkg, "github.com/frayproxy/fray/")
		top, _, _ := strings.Cut(rel, "/")
		if !slices.Contains(homes, top) {
			t.Errorf("package %s lives outside %v", pkg, homes)
		}
	}
	allowed := append(homes, "go.mod", "go.sum", "README.md", "docs", "LICENSE", "CHANGELOG.md", "Containerfile", "scripts")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || slices.Contains(allowed, name) {
			continue
		}
		if tracked, _ := exec.Command("git", "-C", root, "ls-files", name).Output(); len(tracked) == 0 {
			continue // an untracked build output such as ./fray or dist/
		}
		t.Errorf("top level holds %s, which the layout has no place for", name)
	}
}
