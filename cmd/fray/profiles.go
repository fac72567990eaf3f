package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/profiles"
	"github.com/urfave/cli/v2"
)

// profilesCommand lists, shows and validates fault profiles.
func profilesCommand() *cli.Command {
	return &cli.Command{
		Name:      "profiles",
		Usage:     "list, show and validate fault profiles",
		UsageText: "fray profiles list|show|validate|kinds\n\nexample:\n   fray profiles validate my-chaos.toml",
		Action:    subcommandsOnly,
		Subcommands: []*cli.Command{
			{
				Name:      "list",
				Usage:     "list the built-in test profiles and presets",
				UsageText: "fray profiles list\n\nexample:\n   fray profiles list",
				Action:    profilesList,
			},
			{
				Name:      "show",
				Usage:     "print a profile's TOML (a built-in name or a file)",
				UsageText: "fray profiles show NAME|FILE\n\nexample:\n   fray profiles show polling-server",
				Action:    profilesShow,
			},
			{
				Name:      "validate",
				Usage:     "check profile files and print every problem",
				UsageText: "fray profiles validate FILE...\n\nexample:\n   fray profiles validate chaos.toml soak.toml",
				Action:    profilesValidate,
			},
			{
				Name:      "kinds",
				Usage:     "list the fault kinds, their parameters and selectors",
				UsageText: "fray profiles kinds\n\nexample:\n   fray profiles kinds",
				Action:    profilesKinds,
			},
		},
	}
}

// noArgs is the usage error of a command that takes no arguments.
func noArgs(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("%s takes no arguments, got %q", c.Command.HelpName, c.Args().Slice())
	}
	return nil
}

func profilesList(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "test profiles:")
	if err := listProfiles(tw, profiles.Names()); err != nil {
		return err
	}
	fmt.Fprintln(tw, "\npresets (intermediaries with known timeouts; fray profiles show NAME cites their numbers):")
	if err := listProfiles(tw, profiles.Presets()); err != nil {
		return err
	}
	return tw.Flush()
}

// listProfiles writes one line per built-in: its name and the first
// sentence of its description.
func listProfiles(w io.Writer, names []string) error {
	for _, name := range names {
		p, err := profiles.Builtin(name)
		if err != nil {
			return fmt.Errorf("built-in profile %s: %w", name, err)
		}
		fmt.Fprintf(w, "  %s\t%s\n", name, firstSentence(p.Description))
	}
	return nil
}

// firstSentence returns the description up to its first full stop.
func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

func profilesShow(c *cli.Context) error {
	if c.NArg() != 1 {
		return cli.Exit("profiles show: give one profile name or file; see fray profiles list", exitUsage)
	}
	p, err := profiles.Resolve(c.Args().First())
	if errors.Is(err, profiles.ErrUnknownProfile) {
		return usagef("profiles show: %s", strings.TrimPrefix(err.Error(), "profiles: "))
	}
	if err != nil {
		printProblems(c, err)
		return cli.Exit("invalid profile", exitUsage)
	}
	_, err = c.App.Writer.Write(p.Text)
	return err
}

func profilesValidate(c *cli.Context) error {
	if c.NArg() == 0 {
		return cli.Exit("profiles validate: give at least one profile file", exitUsage)
	}
	bad := 0
	for _, file := range c.Args().Slice() {
		p, err := profiles.Load(file)
		if err != nil {
			printProblems(c, err)
			bad++
			continue
		}
		fmt.Fprintf(c.App.Writer, "%s: ok (%s, %d faults)\n", file, p.Name, len(p.Faults))
	}
	if bad > 0 {
		return cli.Exit(fmt.Sprintf("%d of %d profiles invalid", bad, c.NArg()), exitUsage)
	}
	return nil
}

// printProblems writes every problem of a profile on its own line.
func printProblems(c *cli.Context, err error) {
	var es profiles.Errors
	if !errors.As(err, &es) {
		fmt.Fprintln(c.App.ErrWriter, err)
		return
	}
	for _, e := range es {
		fmt.Fprintln(c.App.ErrWriter, e)
	}
}

func profilesKinds(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tON\tPARAMETERS\tWHAT IT DOES")
	for _, k := range faults.Kinds() {
		params := strings.Join(k.Params, ", ")
		if params == "" {
			params = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", k.Name, k.On, params, k.Summary)
	}
	fmt.Fprintf(tw, "\nselectors (any kind): %s\n", strings.Join(faults.SelectorKeys(), ", "))
	return tw.Flush()
}
