package profiles_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/frayproxy/fray/profiles"
)

// FuzzParse checks that no input panics the loader, that a rejected
// profile comes with positioned errors only (each names the file, line
// and column), and that an accepted one compiles.
func FuzzParse(f *testing.F) {
	for _, name := range profiles.Names() {
		p, err := profiles.Builtin(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(p.Text)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := profiles.Parse("fuzz.toml", bytes.NewReader(data))
		if err != nil {
			var es profiles.Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("error %v is not a non-empty Errors", err)
			}
			for _, e := range es {
				if len(data) > profiles.MaxSize && e.Line == 0 {
					continue // the size is a property of the whole file
				}
				prefix := fmt.Sprintf("fuzz.toml:%d:%d: ", e.Line, e.Col)
				if e.File != "fuzz.toml" || e.Line < 1 || e.Col < 1 || !strings.HasPrefix(e.Error(), prefix) {
					t.Fatalf("problem %q (line %d, col %d) has no file:line:col", e.Error(), e.Line, e.Col)
				}
			}
			if p != nil {
				t.Fatal("a profile and an error")
			}
			return
		}
		if _, err := p.Plan(p.Seed); err != nil {
			t.Fatalf("accepted profile does not compile: %v", err)
		}
	})
}
