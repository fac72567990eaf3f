package profiles_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/frayproxy/fray/profiles"
)

// allocated returns the bytes fn allocated.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestHostileProfiles: documents nested far deeper than a profile needs,
// each just under MaxSize, are refused with the place where they nest too
// deep, for memory in proportion to their size (a profile's key paths
// were once each kept whole: a dotted key of n parts cost n²/2 bytes).
func TestHostileProfiles(t *testing.T) {
	n := profiles.MaxSize / 3
	for _, tc := range []struct{ name, doc string }{
		{"dotted key", strings.Repeat("a.", n) + "a = 1\n"},
		{"table header", "[" + strings.Repeat("a.", n) + "a]\nx = 1\n"},
		{"nested arrays", "a = " + strings.Repeat("[", n/4) + strings.Repeat("]", n/4) + "\n"},
		{"nested inline tables", "a = " + strings.Repeat("{b=", n/4) + "1" + strings.Repeat("}", n/4) + "\n"},
		{"array tables", "[[" + strings.Repeat("a.", n/2) + "a]]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.doc) > profiles.MaxSize {
				t.Fatalf("the document is %d bytes, over MaxSize", len(tc.doc))
			}
			var err error
			used := allocated(func() { _, err = profiles.Parse("deep.toml", strings.NewReader(tc.doc)) })
			var es profiles.Errors
			if !errors.As(err, &es) || len(es) != 1 || !errors.Is(es[0], profiles.ErrSize) {
				t.Fatalf("err = %v, want one size error", err)
			}
			if msg := es[0].Error(); !strings.HasPrefix(msg, "deep.toml:1:") || !strings.Contains(msg, "nest more than 32 deep") {
				t.Errorf("error %q does not say where the document nests too deep", msg)
			}
			if limit := uint64(200 * len(tc.doc)); used > limit {
				t.Errorf("parsing %d bytes allocated %d bytes, over %d", len(tc.doc), used, limit)
			}
		})
	}
}

// TestDeepButAllowedKeys: a key path of the most parts allowed, each
// long, is placed in an error message as before.
func TestDeepButAllowedKeys(t *testing.T) {
	long := strings.Repeat("k", 1000)
	doc := "[checks]\n" + strings.Repeat(long+".", 29) + "x = \"loud\"\n"
	var err error
	used := allocated(func() { _, err = profiles.Parse("long.toml", strings.NewReader(doc)) })
	if err == nil || !strings.HasPrefix(err.Error(), "long.toml:2:") {
		t.Errorf("err = %v, want an error on line 2", err)
	}
	if limit := uint64(200 * len(doc)); used > limit {
		t.Errorf("parsing %d bytes allocated %d bytes, over %d", len(doc), used, limit)
	}
}

// TestProfileTooLarge: a profile over MaxSize is refused with its size
// and the limit.
func TestProfileTooLarge(t *testing.T) {
	doc := strings.Repeat("# a comment line of 32 bytes ..\n", profiles.MaxSize/32+10)
	_, err := profiles.Parse("big.toml", strings.NewReader(doc))
	want := fmt.Sprintf("big.toml: the profile is %d bytes, over the limit of %d bytes (64 KiB)", len(doc), profiles.MaxSize)
	if err == nil || !strings.HasPrefix(err.Error(), want) || !errors.Is(err, profiles.ErrSize) {
		t.Errorf("err = %v, want it to start %q", err, want)
	}
}
