package profiles_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/profiles"
)

// tomlBlocks returns the ```toml blocks of a Markdown text, with the line
// each starts on.
func tomlBlocks(text string) (blocks []string, lines []int) {
	sc := bufio.NewScanner(strings.NewReader(text))
	var cur *strings.Builder
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(line) == "```toml":
			cur = &strings.Builder{}
			lines = append(lines, n+1)
		case cur != nil && strings.TrimSpace(line) == "```":
			blocks = append(blocks, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line + "\n")
		}
	}
	return blocks, lines
}

// section returns the "## Faults and profiles" section of a README, or "".
func section(readme string) string {
	_, after, ok := strings.Cut(readme, "\n## Faults and profiles\n")
	if !ok {
		return ""
	}
	if i := strings.Index(after, "\n## "); i >= 0 {
		after = after[:i]
	}
	return after
}

// readmeSection returns the README's "## Faults and profiles" section, the
// profile reference, and the line it starts on.
func readmeSection(t *testing.T) (string, int) {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := section(string(readme))
	if s == "" {
		t.Fatal(`README.md has no "## Faults and profiles" section`)
	}
	before, _, _ := strings.Cut(string(readme), s)
	return s, strings.Count(before, "\n")
}

func TestReferenceExamplesValidate(t *testing.T) {
	text, offset := readmeSection(t)
	blocks, lines := tomlBlocks(text)
	if len(blocks) < 30 {
		t.Errorf("README.md has %d toml examples; every kind should have one", len(blocks))
	}
	for i, b := range blocks {
		name := fmt.Sprintf("README.md:%d", offset+lines[i])
		if _, err := profiles.Parse(name, strings.NewReader(b)); err != nil {
			t.Errorf("example at %s is invalid:\n%v", name, err)
		}
	}
}

// TestReferenceCoversEveryKey fails when a kind, parameter or selector is
// added without a word in the README's reference.
func TestReferenceCoversEveryKey(t *testing.T) {
	text, _ := readmeSection(t)
	ref := []byte(text)
	for _, k := range faults.Kinds() {
		if !bytes.Contains(ref, []byte("#### `"+k.Name+"`")) {
			t.Errorf("kind %s has no section", k.Name)
		}
		for _, p := range k.Params {
			if !bytes.Contains(ref, []byte("`"+p)) {
				t.Errorf("parameter %s of %s is not described", p, k.Name)
			}
		}
	}
	for _, s := range faults.SelectorKeys() {
		if !bytes.Contains(ref, []byte("| `"+s+"` |")) {
			t.Errorf("selector %s has no row", s)
		}
	}
	for _, name := range profiles.Names() {
		if !bytes.Contains(ref, []byte("| `"+name+"` |")) {
			t.Errorf("built-in %s has no row", name)
		}
	}
}
