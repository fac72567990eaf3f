// Command fray is an SSE-aware chaos proxy for MCP traffic: it sits between
// an MCP client and server, injects faults into their event streams, and
// checks that both ends recover.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/report"
)

// Exit codes: exitTable says them, in every command's --help, the README
// and docs/cli.md alike.
const (
	exitOK       = 0
	exitFindings = 1 // a check of error severity failed
	exitUsage    = 2 // bad invocation or profile
	exitCommand  = 3 // the command under fray run (or the demo's client) failed
	// exitInconclusive: nothing failed, but fray saw too little to say
	// (no traffic, nothing reached the upstream, no fault fired).
	exitInconclusive = 4
	// exitNoStart: fray could not start the run or keep it going: the
	// upstream never came up, the --server command died, a report file
	// could not be written.
	exitNoStart = 5
	// exitInterrupted: the run was stopped by SIGINT or SIGTERM, after
	// writing its reports, as a shell reports a command killed by SIGINT.
	exitInterrupted = 130
)

// exitTable is the one table of exit codes, in order, each with the words
// every --help, the README and docs/cli.md give it.
var exitTable = []struct {
	code int
	says string
}{
	{exitOK, "pass"},
	{exitFindings, "a check failed"},
	{exitUsage, "bad invocation"},
	{exitCommand, "the client failed"},
	{exitInconclusive, "inconclusive"},
	{exitNoStart, "could not start"},
	{exitInterrupted, "interrupted"},
}

// exitCodeParts are exitTable's entries, "0 pass" and so on.
func exitCodeParts() []string {
	parts := make([]string, len(exitTable))
	for i, e := range exitTable {
		parts[i] = fmt.Sprintf("%d %s", e.code, e.says)
	}
	return parts
}

// exitCodesHelp is exitTable as the --help of every command that gives a
// verdict shows it: broken between entries so that a line, indented as
// urfave/cli indents it, fits helpWidth.
func exitCodesHelp() string {
	const indent = 3
	var b strings.Builder
	line := "exit codes:"
	for i, p := range exitCodeParts() {
		if i < len(exitTable)-1 {
			p += ","
		}
		if indent+len(line)+1+len(p) > helpWidth {
			b.WriteString(line + "\n")
			line = p
			continue
		}
		line += " " + p
	}
	b.WriteString(line)
	return b.String() + "\n(docs/cli.md#exit-codes explains each)"
}

func main() {
	os.Exit(run(context.Background(), os.Args, os.Stdout, os.Stderr))
}

// run executes the command line and returns the process's exit code. Only
// here is an exit code chosen; the commands return errors.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	app := newApp(stdout, stderr)
	err := app.RunContext(ctx, args)
	if err == nil {
		return exitOK
	}
	msg := err.Error()
	// An error that carries no code is fray failing to run, never a
	// verdict.
	code := exitNoStart
	var ec cli.ExitCoder
	if errors.As(err, &ec) {
		code = ec.ExitCode()
	}
	if strings.HasPrefix(msg, "No help topic for") {
		// fray help NOSUCH: urfave/cli's own code for it is 3, which fray
		// documents as a failed client command.
		code = exitUsage
	}
	if msg != "" {
		fmt.Fprintf(stderr, "fray: %s\n", report.PrintableLines(msg))
	}
	return code
}

func newApp(stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:    "fray",
		Version: buildVersion(),
		// fray --generate-bash-completion lists the words a shell may
		// complete; see docs/cli.md for the shell's side.
		EnableBashCompletion: true,
		Usage:                "an SSE-aware chaos proxy for MCP servers and clients",
		UsageText: "fray COMMAND [options]\n" +
			"(fray COMMAND --help for its options; docs/cli.md explains them all)\n\n" +
			"example:\n   fray demo\n   fray proxy --upstream http://127.0.0.1:3000 --listen 127.0.0.1:7070",
		Writer:    stdout,
		ErrWriter: stderr,
		Commands: []*cli.Command{
			proxyCommand(),
			runCommand(),
			sweepCommand(),
			shrinkCommand(),
			demoCommand(),
			checkCommand(),
			reportCommand(),
			replayCommand(),
			profilesCommand(),
			probesCommand(),
			versionCommand(),
		},
		// Exit codes are chosen in run, never inside the library.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError:   usageError,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return unknownCommand("fray", c.Args().First(), c.App.Commands)
			}
			return cli.ShowAppHelp(c)
		},
	}
	setUsageErrors(app.Commands)
	return app
}

// setUsageErrors makes every bad flag, at any depth, exit 2 with one line
// rather than the command's whole help.
func setUsageErrors(cmds []*cli.Command) {
	for _, c := range cmds {
		if c.OnUsageError == nil {
			c.OnUsageError = usageError
		}
		setUsageErrors(c.Subcommands)
	}
}

// unknownCommand is the usage error for a subcommand of parent that does
// not exist, with the one it most likely meant.
func unknownCommand(parent, name string, cmds []*cli.Command) error {
	var names []string
	for _, c := range cmds {
		if !c.Hidden {
			names = append(names, c.Names()...)
		}
	}
	return usagef("unknown command %q%s; see %s --help", name, faults.DidYouMean(name, names), parent)
}

// subcommandsOnly is the action of a command that only groups others:
// with no argument it shows its help, with one it names the unknown
// subcommand (exit 2) instead of looking for a help topic.
func subcommandsOnly(c *cli.Context) error {
	if c.NArg() == 0 {
		return cli.ShowSubcommandHelp(c)
	}
	return unknownCommand("fray "+c.Command.Name, c.Args().First(), c.Command.Subcommands)
}

// usageError turns flag parsing problems into exit code 2.
func usageError(_ *cli.Context, err error, _ bool) error {
	return cli.Exit(err.Error(), exitUsage)
}

// usagef reports a bad invocation (exit code 2).
func usagef(format string, args ...any) error {
	return cli.Exit(fmt.Sprintf(format, args...), exitUsage)
}
