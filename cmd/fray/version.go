package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/urfave/cli/v2"
)

// version is set at link time: go build -ldflags "-X main.version=v1.2.3".
var version = ""

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:      "version",
		Usage:     "print fray's version",
		UsageText: "fray version\n\nexample:\n   fray version",
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("version takes no arguments, got %q", c.Args().Slice())
			}
			return printVersion(c.App.Writer)
		},
	}
}

// fray --version says what fray version does.
func init() {
	cli.VersionPrinter = func(c *cli.Context) { _ = printVersion(c.App.Writer) }
}

func printVersion(w io.Writer) error {
	_, err := fmt.Fprintf(w, "fray %s %s %s/%s\n", buildVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return err
}

func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
