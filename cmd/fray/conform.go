package main

import (
	"errors"
	"io"
	"io/fs"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/frayproxy/fray/proxy/baseline"
	"github.com/frayproxy/fray/proxy/report"
)

// checksJSONWriter writes the MCP conformance suite's checks.json
// (docs/reports.md), stamped with the moment the verdict is written.
var checksJSONWriter = writer{"checks-json", "write conformance checks.json to `FILE`", func(w io.Writer, r report.Report) error {
	return report.WriteChecksJSON(w, r, time.Now())
}}

// baselineFlag names the expected-failures baseline; every command that
// ends with a verdict takes it.
func baselineFlag() cli.Flag {
	return &cli.StringFlag{Name: "baseline", Usage: "known failures `FILE` to set aside"}
}

// expected is a baseline read from its file: its entries and the name
// reports cite it by.
type expected struct {
	file    string
	entries []report.BaselineEntry
}

// readBaseline reads --baseline, when given, before anything starts: a
// baseline that cannot be read or names an unknown check is a bad
// invocation (exit 2), with the file, the line and the value.
func readBaseline(c *cli.Context) (*expected, error) {
	path := c.String("baseline")
	if path == "" {
		return nil, nil
	}
	entries, err := baseline.Read(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, usagef("--baseline: %v (start with an empty file, or leave --baseline out)", err)
	}
	if err != nil {
		return nil, usagef("--baseline: %v", err)
	}
	return &expected{file: path, entries: entries}, nil
}

// judge applies the baseline to r, when there is one, and marks an
// inconclusive verdict accepted when --allow-inconclusive was given: the
// verdict the exit code follows is the baselined one.
func (o *outputs) judge(r *report.Report) {
	if o.baseline != nil {
		r.ApplyBaseline(o.baseline.file, o.baseline.entries)
	}
	verdict, _, _ := r.Outcome()
	r.Accepted = o.allow && verdict == report.VerdictInconclusive
}
