// Package baseline reads an expected-failures baseline: the file that
// lists the checks a project knows to fail, so that it can adopt fray in CI
// before it fixes them. The file has the shape of the MCP conformance
// suite's expected-failures file (a YAML map with the lists server: and
// client:), with fray's check ids for entries:
//
//	server:
//	  - server.priming-event          # the SDK does not prime streams yet
//	client:
//	  - lossy-resume:client.backoff   # only under the profile lossy-resume
//
// An entry is a check id, or PROFILE:CHECK-ID to limit it to runs under
// that profile. The comment after an entry is its reason, which reports
// quote. server.* checks go under server:, client.* under client:, e2e.*
// (which judge the pair) under either. What the entries do to a verdict is
// report.Report.ApplyBaseline's job; this package only reads the file.
package baseline

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/report"
)

// Read reads and checks the baseline file at path.
func Read(path string) ([]report.BaselineEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	defer f.Close()
	return Parse(path, f)
}

// Parse reads a baseline from rd; name is the file's name, for errors. It
// reads the block form of YAML the suite's files are written in: the keys
// server: and client: at the start of a line, each followed by its entries
// one a line ("- ENTRY"), or by [] when empty; comments and blank lines
// anywhere. Every error names the file, the line and the value, and says
// what to write instead. An empty file lists nothing.
func Parse(name string, rd io.Reader) ([]report.BaselineEntry, error) {
	p := parser{name: name, seenKey: map[string]int{}, seenEntry: map[string]int{}}
	sc := bufio.NewScanner(rd)
	for sc.Scan() {
		p.line++
		if err := p.parseLine(strings.TrimSuffix(sc.Text(), "\r")); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("baseline: read %s: %w", name, err)
	}
	return p.entries, nil
}

type parser struct {
	name      string
	line      int
	section   string         // "server", "client", or "" before the first key
	seenKey   map[string]int // key -> line
	seenEntry map[string]int // profile:check -> line
	entries   []report.BaselineEntry
}

// errorf makes an error that names the file and the line.
func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("baseline %s line %d: %s", p.name, p.line, fmt.Sprintf(format, args...))
}

func (p *parser) parseLine(text string) error {
	body, comment := splitComment(text)
	trimmed := strings.TrimSpace(body)
	switch {
	case trimmed == "" || trimmed == "---":
		return nil
	case strings.HasPrefix(trimmed, "- ") || trimmed == "-":
		if p.section == "" {
			return p.errorf("%q: an entry before any list; put it under server: or client:", trimmed)
		}
		return p.entry(strings.TrimSpace(strings.TrimPrefix(trimmed, "-")), comment)
	case body[0] == ' ' || body[0] == '\t':
		return p.errorf("%q: not an entry; write one entry a line, as \"  - CHECK-ID\"", trimmed)
	}
	key, value, ok := strings.Cut(trimmed, ":")
	key = strings.TrimSpace(key)
	if !ok || (key != "server" && key != "client") {
		return p.errorf("%q: a baseline holds the lists server: and client:, of check ids", trimmed)
	}
	if at, dup := p.seenKey[key]; dup {
		return p.errorf("%q: %s: is already at line %d; keep one list", trimmed, key, at)
	}
	p.seenKey[key], p.section = p.line, key
	switch value = strings.TrimSpace(value); value {
	case "", "[]":
		return nil
	}
	return p.errorf("%q: write the entries one a line under %s:, as \"  - CHECK-ID\"", trimmed, key)
}

// entry checks one entry of the current list and adds it.
func (p *parser) entry(value, comment string) error {
	raw := value
	if len(value) >= 2 && (value[0] == '"' || value[0] == '\'') && value[len(value)-1] == value[0] {
		value = value[1 : len(value)-1]
	} else if k, v, ok := strings.Cut(value, ": "); ok {
		return p.errorf("%q is a map, not an entry; remove the space after the colon: \"- %s:%s\"", raw, k, strings.TrimSpace(v))
	}
	if value == "" {
		return p.errorf("an empty entry; write a check id, as \"- server.priming-event\"")
	}
	e := report.BaselineEntry{Check: value, Line: p.line, Reason: comment}
	if profile, id, ok := strings.Cut(value, ":"); ok {
		if profile == "" || id == "" {
			return p.errorf("%q: write PROFILE:CHECK-ID, both sides of the colon", raw)
		}
		e.Profile, e.Check = profile, id
	}
	if _, ok := checks.Lookup(e.Check); !ok {
		return p.errorf("%q is not a fray check id%s; the ids are listed in docs/checks.md and in the JSON report", e.Check, faults.DidYouMean(e.Check, checks.IDs()))
	}
	end, _, _ := strings.Cut(e.Check, ".")
	if end != p.section && end != "e2e" {
		return p.errorf("%q judges the %s; move it under %s:", e.Check, end, end)
	}
	if at, dup := p.seenEntry[e.Profile+":"+e.Check]; dup {
		return p.errorf("%q is listed already at line %d; remove one", raw, at)
	}
	if at, dup := p.seenEntry[":"+e.Check]; dup && e.Profile != "" {
		return p.errorf("%q: line %d lists %s under every profile already; remove one", raw, at, e.Check)
	}
	for k, at := range p.seenEntry {
		if e.Profile == "" && strings.HasSuffix(k, ":"+e.Check) && !strings.HasPrefix(k, ":") {
			return p.errorf("%q: line %d lists %s under one profile already; remove one", raw, at, e.Check)
		}
	}
	p.seenEntry[e.Profile+":"+e.Check] = p.line
	p.entries = append(p.entries, e)
	return nil
}

// splitComment cuts a line at a " #" (or a leading "#") outside quotes,
// and returns what comes before it and the comment's text, trimmed.
func splitComment(line string) (body, comment string) {
	var quote byte
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			return line[:i], strings.TrimSpace(line[i+1:])
		}
	}
	return line, ""
}
