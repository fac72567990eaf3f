package checks_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/frayproxy/fray/proxy/checks"
)

// TestChecksTableIsTheCatalog: checks.md's table lists every check of the
// catalog, in order, with its default severity, summary and the published
// sentence it rests on.
func TestChecksTableIsTheCatalog(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "checks.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z0-9.-]+)` \\| (error|warning) \\| (.*) \\| (.*) \\((.*)\\) \\|$")
	var got []string
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		got = append(got, strings.Join(m[1:], " | "))
	}
	var want []string
	for _, c := range checks.Catalog() {
		want = append(want, strings.Join([]string{c.ID, string(c.Severity), c.Summary, c.Rule, c.Source}, " | "))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("checks.md's table:\n%s\nwant (the catalog):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
