package profiles

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors, reachable with errors.Is through Error and Errors.
var (
	// ErrSyntax: the file is not valid TOML.
	ErrSyntax = errors.New("not valid TOML")
	// ErrUnknownKey: a top-level key fray does not know, or a [checks]
	// key that is not a check id of the verifier's catalog.
	ErrUnknownKey = errors.New("unknown key")
	// ErrType: a value of the wrong type.
	ErrType = errors.New("wrong type")
	// ErrRange: a value of the right type but not allowed.
	ErrRange = errors.New("out of range")
	// ErrSize: the profile is larger than MaxSize, or nests deeper than
	// a profile can; nothing of it was decoded.
	ErrSize = errors.New("too large")
	// ErrUnknownProfile: Resolve or Builtin got a name no built-in has.
	ErrUnknownProfile = errors.New("unknown profile")
)

// Error is one problem in a profile, with its position when known.
type Error struct {
	// File is the name the profile was parsed under.
	File string
	// Line and Col are 1-based; 0 when the problem has no position (a
	// profile built in code).
	Line, Col int
	// Path is the key, such as "fault[2].delay"; "" for the whole file.
	Path string
	// Msg says what is wrong, naming the value.
	Msg string
	// Err is a sentinel of this package or of package faults.
	Err error
}

// Error returns "flaky.toml:12:3: fault[2].delay: \"fast\" is not a duration".
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d:%d", e.Line, e.Col)
		}
		b.WriteString(": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }

// Errors is every problem found in a profile, ordered by position.
type Errors []*Error

// Error returns one problem per line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the problems, so errors.Is sees every sentinel.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}
