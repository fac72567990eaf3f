// Package profiles reads fault profiles: TOML files that name faults, the
// traffic they hit and the severity of the verifier's checks. A profile is
// read with Load (a file) or Parse (any reader), checked whole, and turned
// into a faults.Set, the Plan the proxy consults:
//
//	file --Load/Parse--> Profile --Plan(seed)--> faults.Set (a faults.Plan)
//
// Every problem in a profile is reported at once, each with its file, line,
// column and key, and no Profile is returned while any remains. The
// built-in profiles are embedded; see Builtin, Names and Resolve.
package profiles

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/checks"
	"github.com/pelletier/go-toml/v2"
)

// MaxSize bounds a profile in bytes, from any source: a file, a trace's
// header, the admin API. The largest built-in profile is under 2 KiB.
const MaxSize = 64 << 10

// Profile is a parsed fault profile. The zero value is an empty profile
// with seed 0 that injects nothing. A Profile is not modified by this
// package after Parse returns, so it may be read concurrently.
type Profile struct {
	// Name is the profile's name: its `name` key, or the file name
	// without directory and extension.
	Name string
	// Description says what the profile provokes and what a correct
	// client and server do under it.
	Description string
	// Seed seeds every random choice unless the caller overrides it.
	Seed uint64
	// Exercises names the recoveries the profile exists to exercise
	// (faults.Purposes): a run in which one of them never happened is
	// inconclusive, whatever else fired. Nil derives them from the
	// faults (Needs); an empty list says the profile exercises none, and
	// any fault that fires will do.
	Exercises []string
	// Checks maps check ids ("client.retry-honoured") to severities.
	Checks map[string]checks.Severity
	// Faults are the [[fault]] tables in order; a fault's index is its
	// position here.
	Faults []faults.Spec
	// File is the name errors are reported under.
	File string
	// Text is the TOML the profile was parsed from; nil for a profile
	// built in code.
	Text []byte

	pos        *positions
	checkPaths map[string]string
}

// Load reads and parses the profile file at path.
func Load(path string) (*Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("profiles: %w", err)
	}
	defer f.Close()
	return Parse(path, f)
}

// Parse reads a profile from r; name is the file name used in messages
// and, without directory and extension, the default profile name. The
// error, if any, is an Errors holding every problem found.
func Parse(name string, r io.Reader) (*Profile, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("profiles: reading %s: %w", name, err)
	}
	if len(data) > MaxSize {
		return nil, Errors{tooLarge(name, r)}
	}
	// The positions first: walking the document, they find a nesting
	// that decoding it would pay for.
	ix := indexPositions(data)
	if ix.deepAt {
		return nil, Errors{{File: name, Line: ix.deep.line, Col: ix.deep.col, Err: ErrSize,
			Msg: fmt.Sprintf("keys, tables and arrays nest more than %d deep here; a profile needs a few levels", maxDepth)}}
	}
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		return nil, Errors{syntaxError(name, err)}
	}
	p := &Profile{File: name, Text: data, pos: ix}
	d := decoder{p: p}
	d.top(doc)
	if err := p.Validate(); err != nil {
		var es Errors
		errors.As(err, &es)
		d.merge(es)
	}
	if len(d.errs) > 0 {
		sortErrors(d.errs)
		return nil, d.errs
	}
	if p.Name == "" {
		p.Name = strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	}
	return p, nil
}

// tooLarge is the error for a profile over MaxSize, MaxSize+1 bytes of
// which were read from r: it counts the rest, up to a bound, to say how
// large the profile is.
func tooLarge(name string, r io.Reader) *Error {
	const counted = 64 * MaxSize
	rest, _ := io.Copy(io.Discard, io.LimitReader(r, counted))
	size := fmt.Sprintf("%d bytes", MaxSize+1+rest)
	if rest == counted {
		size = "more than " + size
	}
	return &Error{File: name, Err: ErrSize,
		Msg: fmt.Sprintf("the profile is %s, over the limit of %d bytes (%d KiB); a profile names faults and checks in a few KiB", size, MaxSize, MaxSize>>10)}
}

func syntaxError(name string, err error) *Error {
	var de *toml.DecodeError
	if errors.As(err, &de) {
		line, col := de.Position()
		return &Error{File: name, Line: line, Col: col, Msg: strings.TrimPrefix(de.Error(), "toml: "), Err: ErrSyntax}
	}
	return &Error{File: name, Msg: err.Error(), Err: ErrSyntax}
}

// Validate checks the faults and the checks table, returning an Errors
// with every problem (positioned when the profile was parsed).
func (p *Profile) Validate() error {
	var errs Errors
	if _, err := faults.Compile(p.Seed, p.Faults); err != nil {
		var pe faults.ParamErrors
		if !errors.As(err, &pe) {
			return fmt.Errorf("profiles: %w", err)
		}
		for _, e := range pe {
			errs = append(errs, p.faultError(e))
		}
	}
	for _, id := range sortedKeys(p.Checks) {
		errs = append(errs, p.checkErrors(id, p.Checks[id])...)
	}
	for _, e := range p.Exercises {
		if !faults.ValidPurpose(e) {
			errs = append(errs, p.errorAt("exercises", false, ErrRange,
				fmt.Sprintf("%q is not one of %s%s", e, strings.Join(faults.Purposes(), ", "), faults.DidYouMean(e, faults.Purposes()))))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	sortErrors(errs)
	return errs
}

// Needs is what a run of the profile must exercise before its verdict
// may pass: the recoveries its exercises key names, or, without one,
// those its faults exist for (faults.Set.Needs). Nil when it exercises
// none: then any fault that fires will do.
func (p *Profile) Needs() []faults.Need {
	if p.Exercises != nil {
		out := make([]faults.Need, 0, len(p.Exercises))
		for _, e := range p.Exercises {
			out = append(out, faults.Need{Fault: -1, Any: []string{e}})
		}
		return out
	}
	s, err := faults.Compile(p.Seed, p.Faults)
	if err != nil {
		return nil
	}
	return s.Needs()
}

// Plan compiles the profile's faults with seed (pass p.Seed unless a
// --seed flag overrides it). The Set implements faults.Plan.
func (p *Profile) Plan(seed uint64) (*faults.Set, error) {
	s, err := faults.Compile(seed, p.Faults)
	if err != nil {
		return nil, fmt.Errorf("profiles: %s: %w", p.Name, err)
	}
	return s, nil
}

// errorAt builds an Error at the value (or, with atKey, the key) of path.
func (p *Profile) errorAt(path string, atKey bool, sentinel error, msg string) *Error {
	e := &Error{File: p.File, Path: path, Msg: msg, Err: sentinel}
	if pl, ok := p.pos.lookup(path); ok {
		at := pl.value
		if atKey {
			at = pl.key
		}
		e.Line, e.Col = at.line, at.col
	}
	return e
}

// faultError places a faults.ParamError.
func (p *Profile) faultError(e *faults.ParamError) *Error {
	path := indexKey("fault", e.Fault)
	if e.Key != "" {
		top, sub, nested := strings.Cut(e.Key, ".")
		path = joinKey(path, top)
		if nested {
			path = joinKey(path, sub)
		}
	}
	atKey := errors.Is(e.Err, faults.ErrUnknownKey) || errors.Is(e.Err, faults.ErrConflict)
	out := p.errorAt(path, atKey, e.Err, e.Msg)
	out.Path = e.Path()
	return out
}

func sortErrors(es Errors) {
	// Stable, so problems at one position keep the order they were found.
	slices.SortStableFunc(es, func(a, b *Error) int { return cmp.Or(a.Line-b.Line, a.Col-b.Col) })
}
