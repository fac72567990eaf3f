package probes_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/frayproxy/fray/profiles/probes"
)

// TestProbesAreListed holds probes.md's catalog and the README's table to
// the probe catalog: every probe has its row, with its end, finding and
// public report (and in the README, the releases it was found in), and no
// row names a probe that does not exist.
func TestProbesAreListed(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "probes.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := tableRows(string(doc), "| probe | end |")
	short := tableRows(string(readme), "| probe | public report |")
	if len(rows) != len(probes.All()) || len(short) != len(probes.All()) {
		t.Errorf("probes.md lists %d probes, the README %d; the catalog has %d", len(rows), len(short), len(probes.All()))
	}
	for _, p := range probes.All() {
		row := rows["`"+p.Name+"`"]
		if row == "" || !strings.Contains(row, "| "+p.End+" |") || !strings.Contains(row, "`"+p.Finding+"`") || !strings.Contains(row, "("+p.Issue+")") {
			t.Errorf("probes.md's row for %s is %q; want its end %s, finding %s and report %s", p.Name, row, p.End, p.Finding, p.Issue)
		}
		for _, r := range p.Related {
			if !strings.Contains(row, "("+r+")") {
				t.Errorf("probes.md's row for %s lacks the related report %s", p.Name, r)
			}
		}
		if !strings.Contains(short["`"+p.Name+"`"], "("+p.Issue+")") {
			t.Errorf("the README's row for %s does not link %s", p.Name, p.Issue)
		}
		if !strings.HasSuffix(short["`"+p.Name+"`"], "| "+p.FoundIn+" |") && !(p.FoundIn == "" && strings.HasSuffix(short["`"+p.Name+"`"], "|  |")) {
			t.Errorf("the README's row for %s does not end with the releases it was found in, %q", p.Name, p.FoundIn)
		}
	}
}

// tableRows returns the rows of the Markdown table whose header starts
// with header, by their first cell.
func tableRows(text, header string) map[string]string {
	out := map[string]string{}
	in := false
	for line := range strings.SplitSeq(text, "\n") {
		switch {
		case strings.HasPrefix(line, header):
			in = true
		case in && strings.HasPrefix(line, "|---"):
		case in && strings.HasPrefix(line, "| "):
			cell, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " |")
			out[cell] = line
		default:
			in = false
		}
	}
	return out
}
