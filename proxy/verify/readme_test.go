package verify_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/frayproxy/fray/checks"
)

// TestREADMEListsTheCatalog: the README's table of checks names every
// check of the catalog, in order, with its default severity.
func TestREADMEListsTheCatalog(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "## Checks")
	if start < 0 {
		t.Fatal("README has no Checks section")
	}
	end := strings.Index(text[start+1:], "\n## ")
	section := text[start : start+1+end]
	row := regexp.MustCompile("(?m)^\\| `([a-z0-9.-]+)` \\| (error|warning) \\|")
	var got []string
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		got = append(got, m[1]+" "+m[2])
	}
	var want []string
	for _, c := range checks.Catalog() {
		want = append(want, c.ID+" "+string(c.Severity))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("README checks table:\n%s\nwant (the catalog):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
