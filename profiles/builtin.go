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
	// dirTest holds the test profiles: fault mixes that provoke one kind
	// of recovery.
	dirTest = "builtin"
	// dirPreset holds the presets: each imitates one intermediary or
	// client with a known timeout or buffering, and cites where its
	// numbers come from.
	dirPreset = "presets"
)

// Names lists the built-in test profiles, sorted; Presets lists the
// presets.
func Names() []string { return group(dirTest) }

// Presets lists the built-in presets, sorted.
func Presets() []string { return group(dirPreset) }

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
	if strings.ContainsAny(name, "/\\") {
		return nil, unknownBuiltin(name)
	}
	for _, dir := range []string{dirTest, dirPreset} {
		file := path.Join(dir, name+".toml")
		if data, err := builtinFS.ReadFile(file); err == nil {
			return Parse(file, bytes.NewReader(data))
		}
	}
	return nil, unknownBuiltin(name)
}

// unknownBuiltin is the error for a name no built-in has, with the
// built-in it most likely meant.
func unknownBuiltin(name string) error {
	all := append(Names(), Presets()...)
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
