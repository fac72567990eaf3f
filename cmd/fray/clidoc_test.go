package main

import (
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// cliDocSection returns the part of docs/cli.md under the "## " heading
// that names `fray NAME`, up to the next "## " heading.
func cliDocSection(doc, name string) string {
	for sec := range strings.SplitSeq(doc, "\n## ") {
		heading, _, _ := strings.Cut(sec, "\n")
		if strings.Contains(heading, "`fray "+name+"`") {
			return sec
		}
	}
	return ""
}

// TestCLIDocCoversEveryFlag holds docs/cli.md to the commands: every
// command has a section, and every flag of the command and of its
// subcommands is named in it, so a flag is never added without a word in
// the reference.
func TestCLIDocCoversEveryFlag(t *testing.T) {
	b := readFile(t, filepath.Join("..", "..", "docs", "cli.md"))
	doc := string(b)
	var flagsOf func(c *cli.Command) []cli.Flag
	flagsOf = func(c *cli.Command) []cli.Flag {
		fs := c.Flags
		for _, s := range c.Subcommands {
			fs = append(fs, flagsOf(s)...)
		}
		return fs
	}
	for _, c := range newApp(io.Discard, io.Discard).Commands {
		if c.Hidden {
			continue
		}
		sec := cliDocSection(doc, c.Name)
		if sec == "" {
			t.Errorf("docs/cli.md has no section for fray %s", c.Name)
			continue
		}
		for _, s := range c.Subcommands {
			if !strings.Contains(sec, "fray "+c.Name+" "+s.Name) {
				t.Errorf("docs/cli.md's section for fray %s does not name fray %s %s", c.Name, c.Name, s.Name)
			}
		}
		for _, f := range flagsOf(c) {
			name := f.Names()[0]
			if !strings.Contains(sec, "`--"+name) && !strings.Contains(sec, "[--"+name) {
				t.Errorf("docs/cli.md's section for fray %s does not describe --%s", c.Name, name)
			}
		}
	}
	for code := range map[int]bool{exitOK: true, exitFindings: true, exitUsage: true, exitCommand: true, exitInconclusive: true, exitInterrupted: true} {
		if !strings.Contains(doc, "| "+strconv.Itoa(code)+" |") {
			t.Errorf("docs/cli.md's exit codes have no row for %d", code)
		}
	}
}
