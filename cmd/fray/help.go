package main

import (
	"regexp"

	"github.com/urfave/cli/v2"
)

// helpWidth and helpLines are the most a command's --help may take: one
// screen of a terminal. Each flag's usage is a few words; docs/cli.md
// holds the full explanation.
const (
	helpWidth = 80
	helpLines = 45
)

// helpNoise is what urfave/cli adds to a flag's help line that says
// nothing: the repeated name of a repeatable flag, and the default of a
// boolean flag, which is always false.
var helpNoise = regexp.MustCompile(` \[ --[a-z-]+ [A-Za-z]+ \]| \(default: false\)`)

func init() {
	stringify := cli.FlagStringer
	cli.FlagStringer = func(f cli.Flag) string {
		return helpNoise.ReplaceAllString(stringify(f), "")
	}
}
