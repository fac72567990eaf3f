package main

import (
	"fmt"
	"html/template"
	"io"
	"path/filepath"
	"strings"

	"github.com/frayproxy/fray/profiles/sweep"
	"github.com/frayproxy/fray/proxy/report"
	"github.com/frayproxy/fray/proxy/timeline"
)

// sweepIndex is the index page of a sweep: a row per cell, a link to the
// timeline of each failing one.
var sweepIndex = template.Must(template.New("index").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>fray sweep: {{.Verdict}}</title>
<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left}.fail{background:#fdd}.inconclusive{background:#ffd}</style>
</head><body><h1>fray sweep: {{.Verdict}}</h1>
<table><tr><th>stream</th><th>point</th><th>mode</th><th>verdict</th><th>timeline</th><th>reproduce</th></tr>
{{range .Rows}}<tr class="{{.Class}}"><td>{{.Stream}}</td><td>{{.Point}}</td><td>{{.Mode}}</td><td>{{.Outcome}}</td><td>{{if .Link}}<a href="{{.Link}}">timeline</a>{{end}}</td><td><code>{{.Reproduce}}</code></td></tr>
{{end}}</table></body></html>
`))

// relativeTo is the link from the page at page to the file at path.
func relativeTo(page, path string) string {
	from, err1 := filepath.Abs(filepath.Dir(page))
	to, err2 := filepath.Abs(path)
	if err1 != nil || err2 != nil {
		return path
	}
	rel, err := filepath.Rel(from, to)
	if err != nil {
		return path
	}
	return filepath.ToSlash(rel)
}

type sweepRow struct {
	Class, Stream, Point, Mode, Outcome, Link, Reproduce string
}

// writeSweepPages draws the timeline of every failing cell beside its
// trace, and the index page at page, which links them.
func writeSweepPages(page string, sw *sweep.Sweep) error {
	var rows []sweepRow
	for i := range sw.Results {
		r := &sw.Results[i]
		row := sweepRow{Class: r.Outcome.Verdict, Stream: r.Cell.Point.Stream.Label(), Point: r.Cell.Point.Where(),
			Mode: r.Cell.Mode.String(), Outcome: r.Outcome.String(), Reproduce: r.Reproduce}
		if r.Trace != "" {
			r.Timeline = strings.TrimSuffix(r.Trace, ".jsonl.gz") + ".html"
			in, err := timelineInput(r.Trace, true)
			if err != nil {
				return fmt.Errorf("--html: %w", err)
			}
			in.Title = "fray sweep: " + r.Cell.String()
			if err := report.WriteFile(r.Timeline, func(w io.Writer) error { return timeline.Write(w, in) }); err != nil {
				return fmt.Errorf("--html: %w", err)
			}
			row.Link = relativeTo(page, r.Timeline)
		}
		rows = append(rows, row)
	}
	data := struct {
		Verdict string
		Rows    []sweepRow
	}{sw.Verdict(), rows}
	return report.WriteFile(page, func(w io.Writer) error { return sweepIndex.Execute(w, data) })
}
