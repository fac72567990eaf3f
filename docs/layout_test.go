package docs

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestLayoutListsEveryPackage holds architecture.md's layout table to the
// tree: every Go package of the module is listed, and every path listed
// exists.
func TestLayoutListsEveryPackage(t *testing.T) {
	text, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
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
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root = strings.TrimSuffix(root, "/docs")
	for dir := range strings.FieldsSeq(string(out)) {
		rel := strings.TrimPrefix(strings.TrimPrefix(dir, root), "/")
		if rel == "" {
			continue
		}
		covered := slices.ContainsFunc(listed, func(p string) bool { return rel == p })
		if !covered {
			t.Errorf("package %s is not in architecture.md's layout", rel)
		}
	}
	for _, p := range listed {
		if _, err := os.Stat(root + "/" + p); err != nil {
			t.Errorf("architecture.md lists %s, which does not exist", p)
		}
	}
}
