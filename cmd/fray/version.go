package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/urfave/cli/v2"
)

// version and commit are set at link time, as scripts/release.sh does:
// go build -ldflags "-X main.version=v1.2.3 -X main.commit=0123456789ab".
// Each wins over what the build information says.
var version, commit = "", ""

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

// buildVersion names this build: the version stamped at link time, or
// else the module's version, then the VCS commit it was built from, with
// "-dirty" when the tree had changes.
func buildVersion() string {
	bi, _ := debug.ReadBuildInfo()
	return describeBuild(version, commit, bi)
}

// describeBuild says what a build is from its -X stamps (version and
// commit, "" when not stamped) and its build information (nil when there
// is none): "v1.2.3 (commit 0123456789ab)", "v0.0.0-20261129-0123456789ab+dirty
// (commit 0123456789ab-dirty)", "(devel)". A build outside a VCS checkout
// (go install MODULE@VERSION) has its module version alone.
func describeBuild(stamp, commitStamp string, bi *debug.BuildInfo) string {
	v := stamp
	if v == "" && bi != nil {
		v = bi.Main.Version
	}
	if v == "" {
		v = "(devel)"
	}
	if commitStamp != "" {
		return v + " (commit " + commitStamp + ")"
	}
	if bi == nil {
		return v
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return v
	}
	rev = rev[:min(len(rev), 12)]
	if modified == "true" {
		rev += "-dirty"
	}
	return v + " (commit " + rev + ")"
}
