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

// reference returns docs/profiles.md, the profile reference: the file
// format, the selectors, every fault kind and the built-in profiles.
func reference(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "profiles.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestReferenceExamplesValidate(t *testing.T) {
	blocks, lines := tomlBlocks(reference(t))
	if len(blocks) < 30 {
		t.Errorf("docs/profiles.md has %d toml examples; every kind should have one", len(blocks))
	}
	for i, b := range blocks {
		name := fmt.Sprintf("docs/profiles.md:%d", lines[i])
		if _, err := profiles.Parse(name, strings.NewReader(b)); err != nil {
			t.Errorf("example at %s is invalid:\n%v", name, err)
		}
	}
}

// TestReferenceCoversEveryKey fails when a kind, parameter, selector,
// built-in or preset is added without a word in the reference,
// docs/profiles.md.
func TestReferenceCoversEveryKey(t *testing.T) {
	ref := []byte(reference(t))
	for _, k := range faults.Kinds() {
		if !bytes.Contains(ref, []byte("### `"+k.Name+"`")) {
			t.Errorf("kind %s has no section", k.Name)
		}
		for _, p := range k.Params {
			if !bytes.Contains(ref, []byte("`"+p)) {
				t.Errorf("parameter %s of %s is not described", p, k.Name)
			}
		}
	}
	rows := map[string][]string{"selector": faults.SelectorKeys(), "built-in": profiles.Names(), "preset": profiles.Presets()}
	for what, names := range rows {
		for _, name := range names {
			if !bytes.Contains(ref, []byte("| `"+name+"` |")) {
				t.Errorf("%s %s has no row", what, name)
			}
		}
	}
}
