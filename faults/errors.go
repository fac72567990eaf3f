package faults

import (
	"errors"
	"strconv"
	"strings"
)

// Sentinel errors wrapped by ParamError, so callers can tell problems apart
// with errors.Is.
var (
	// ErrUnknownKind: the fault's kind is not registered.
	ErrUnknownKind = errors.New("unknown fault kind")
	// ErrUnknownKey: a key is neither a selector nor a parameter of the kind.
	ErrUnknownKey = errors.New("unknown key")
	// ErrType: a value has the wrong type (a number where a duration
	// string belongs, a string that is not a duration).
	ErrType = errors.New("wrong type")
	// ErrRange: a value is of the right type but out of its range.
	ErrRange = errors.New("out of range")
	// ErrConflict: keys that cannot be used together, or that do not apply
	// to the kind.
	ErrConflict = errors.New("impossible combination")
	// ErrMissing: a required parameter is absent.
	ErrMissing = errors.New("missing parameter")
	// ErrNoFault: an index names no fault of a Set.
	ErrNoFault = errors.New("no such fault")
)

// ParamError is one problem with one fault of a list of Specs.
type ParamError struct {
	// Fault is the fault's index in its list, from 0.
	Fault int
	// Key is the key at fault, "" when the problem is the fault as a
	// whole; a key inside a table is written "headers.Retry-After".
	Key string
	// Msg says what is wrong with the value, naming it.
	Msg string
	// Err is one of the sentinel errors of this package.
	Err error
}

// Path returns where the problem is, such as "fault[2].delay".
func (e *ParamError) Path() string {
	p := "fault[" + strconv.Itoa(e.Fault) + "]"
	if e.Key != "" {
		p += "." + e.Key
	}
	return p
}

// Error returns "fault[2].delay: \"fast\" is not a duration".
func (e *ParamError) Error() string { return e.Path() + ": " + e.Msg }

// Unwrap returns the sentinel error.
func (e *ParamError) Unwrap() error { return e.Err }

// ParamErrors is every problem found in a list of Specs, in order.
type ParamErrors []*ParamError

// Error returns one problem per line.
func (es ParamErrors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the problems, so errors.Is sees every sentinel.
func (es ParamErrors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}
