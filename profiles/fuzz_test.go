package profiles_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/frayproxy/fray/profiles"
)

// FuzzParse checks that no input panics the loader, that a rejected
// profile comes with positioned errors only, and that an accepted one
// compiles.
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
