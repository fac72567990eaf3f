package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/frayproxy/fray/proxy/report"
	"github.com/urfave/cli/v2"
)

// logFlags are the logging options every long-running command takes.
func logFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "log-format", Value: "text", Usage: "text or json"},
		&cli.StringFlag{Name: "log-level", Value: "info", Usage: "debug, info, warn or error"},
	}
}

// newLogger builds the logger the flags ask for, writing to w.
func newLogger(c *cli.Context, w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.String("log-level"))); err != nil {
		return nil, usagef("--log-level %q: want debug, info, warn or error", c.String("log-level"))
	}
	opts := &slog.HandlerOptions{Level: level}
	switch strings.ToLower(c.String("log-format")) {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	default:
		return nil, usagef("--log-format %q: want text or json", c.String("log-format"))
	}
}

// sayf writes one of fray's own lines to w: "fray: " and the message, or,
// with --log-format json, a JSON record at info, so that a collector that
// reads fray's stderr as JSON Lines gets nothing else. The line is written
// whatever --log-level says: it is what fray is doing, not a log.
func sayf(c *cli.Context, w io.Writer, format string, args ...any) {
	// A trace's or a peer's strings may be in it: see report.Printable.
	msg := report.PrintableLines(fmt.Sprintf(format, args...))
	if strings.EqualFold(c.String("log-format"), "json") {
		slog.New(slog.NewJSONHandler(w, nil)).Info(msg)
		return
	}
	fmt.Fprintln(w, "fray: "+msg)
}
