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

//go:embed builtin/*.toml
var builtinFS embed.FS

// Names lists the built-in profiles, sorted.
func Names() []string {
	entries, _ := fs.ReadDir(builtinFS, "builtin")
	var out []string
	for _, e := range entries {
		out = append(out, strings.TrimSuffix(e.Name(), ".toml"))
	}
	sort.Strings(out)
	return out
}

// Builtin parses the built-in profile name. It fails with
// ErrUnknownProfile for a name Names does not list.
func Builtin(name string) (*Profile, error) {
	file := path.Join("builtin", name+".toml")
	data, err := builtinFS.ReadFile(file)
	if err != nil || strings.ContainsAny(name, "/\\") {
		return nil, fmt.Errorf("profiles: %w %q%s; the built-ins are %s", ErrUnknownProfile, name, faults.DidYouMean(name, Names()), strings.Join(Names(), ", "))
	}
	return Parse(file, bytes.NewReader(data))
}

// Resolve loads nameOrPath as a file when it looks like one (it holds a
// path separator or ends in .toml), and as a built-in otherwise.
func Resolve(nameOrPath string) (*Profile, error) {
	if strings.ContainsAny(nameOrPath, "/\\") || strings.HasSuffix(nameOrPath, ".toml") {
		return Load(nameOrPath)
	}
	return Builtin(nameOrPath)
}
