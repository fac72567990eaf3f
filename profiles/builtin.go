package profiles

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/frayproxy/fray/faults"
)

//go:embed builtin/*.toml presets/*.toml
var builtinFS embed.FS

// The groups of built-in profiles, each a directory of builtinFS.
const (
	// GroupTest holds the test profiles: fault mixes that provoke one
	// kind of recovery.
	GroupTest = "builtin"
	// GroupPreset holds the presets: each imitates one intermediary or
	// client with a known timeout or buffering, and cites where its
	// numbers come from.
	GroupPreset = "presets"
)

// Names lists the built-in test profiles, sorted; Presets lists the
// presets.
func Names() []string { return group(GroupTest) }

// Presets lists the built-in presets, sorted.
func Presets() []string { return group(GroupPreset) }

func group(dir string) []string {
	entries, _ := fs.ReadDir(builtinFS, dir)
	var out []string
	for _, e := range entries {
		out = append(out, strings.TrimSuffix(e.Name(), ".toml"))
	}
	sort.Strings(out)
	return out
}

// Builtin parses the built-in profile or preset name. It fails with
// ErrUnknownProfile for a name neither Names nor Presets lists.
func Builtin(name string) (*Profile, error) {
	all := append(Names(), Presets()...)
	if strings.ContainsAny(name, "/\\") {
		return nil, unknownBuiltin(name, all)
	}
	for _, dir := range []string{GroupTest, GroupPreset} {
		file := path.Join(dir, name+".toml")
		if data, err := builtinFS.ReadFile(file); err == nil {
			return Parse(file, bytes.NewReader(data))
		}
	}
	return nil, unknownBuiltin(name, all)
}

func unknownBuiltin(name string, all []string) error {
	return fmt.Errorf("profiles: %w %q%s; the built-ins are %s", ErrUnknownProfile, name, faults.DidYouMean(name, all), strings.Join(all, ", "))
}

// Resolve loads nameOrPath as a file when it looks like one (it holds a
// path separator or ends in .toml), and as a built-in otherwise.
func Resolve(nameOrPath string) (*Profile, error) {
	if strings.ContainsAny(nameOrPath, "/\\") || strings.HasSuffix(nameOrPath, ".toml") {
		return Load(nameOrPath)
	}
	return Builtin(nameOrPath)
}
