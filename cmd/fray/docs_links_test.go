package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// pages are the Markdown files whose links are held: the README, the
// examples' README and every page of docs/.
func pages(t *testing.T) []string {
	t.Helper()
	return append([]string{filepath.Join(root, "README.md"), filepath.Join(root, "examples", "README.md")}, docFiles(t)...)
}

// anchors returns the GitHub anchors of a Markdown text's headings.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	fence := false
	for line := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
			continue
		}
		if fence || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
				b.WriteRune(r)
			}
		}
		out[b.String()] = true
	}
	return out
}

// TestLinksResolve holds every relative link of the README and of docs/ to
// a file that exists and, with a #fragment, to a heading of that file: the
// reference moved out of the README, and a link left pointing at the old
// place would send a reader nowhere.
func TestLinksResolve(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, page := range pages(t) {
		b := readFile(t, page)
		text := string(b)
		// Links inside code blocks and code spans are not links.
		text = regexp.MustCompile("(?s)```.*?```").ReplaceAllString(text, "")
		text = regexp.MustCompile("`[^`\n]*`").ReplaceAllString(text, "")
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s: link %s: %v", page, target, err)
					continue
				}
			}
			if frag == "" {
				continue
			}
			dest, err := os.ReadFile(path)
			if err != nil {
				t.Errorf("%s: link %s: %v", page, target, err)
				continue
			}
			if !anchors(string(dest))[frag] {
				t.Errorf("%s: link %s: %s has no heading with anchor #%s", page, target, path, frag)
			}
		}
	}
}
