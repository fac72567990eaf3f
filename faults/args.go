package faults

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// Args reads one fault's keys for a kind's Build and for the selector
// parser, and collects every problem instead of stopping at the first: a
// reader that meets a bad value records a ParamError naming the fault, the
// key and the value, and returns the default, so Build goes on and every
// problem of a profile is reported at once. An Args is made by Compile
// and is not safe for concurrent use.
type Args struct {
	fault int
	kind  string
	m     map[string]any
	used  map[string]bool
	errs  []*ParamError
}

func newArgs(fault int, kind string, m map[string]any) *Args {
	return &Args{fault: fault, kind: kind, m: m, used: map[string]bool{"kind": true}}
}

// Has reports whether key is present.
func (a *Args) Has(key string) bool {
	_, ok := a.m[key]
	return ok
}

// get returns key's value and marks the key as read.
func (a *Args) get(key string) (any, bool) {
	v, ok := a.m[key]
	if ok {
		a.used[key] = true
	}
	return v, ok
}

// Fail records a problem with key; sentinel is one of the Err values of
// this package, for errors.Is.
func (a *Args) Fail(key string, sentinel error, format string, v ...any) {
	a.errs = append(a.errs, &ParamError{Fault: a.fault, Key: key, Msg: fmt.Sprintf(format, v...), Err: sentinel})
}

// ShowValue writes a decoded TOML value the way a profile author wrote it,
// for error messages: strings quoted, tables and arrays by name.
func ShowValue(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("%q", v)
	case map[string]any:
		return "a table"
	case []any:
		return "an array"
	default:
		return fmt.Sprint(v)
	}
}

// Duration reads a non-negative duration string; absent gives def.
func (a *Args) Duration(key string, def time.Duration) time.Duration {
	v, ok := a.get(key)
	if !ok {
		return def
	}
	s, ok := as[string](a, key, v, "a duration (write a string such as \"250ms\")")
	if !ok {
		return def
	}
	var d Duration
	if err := d.UnmarshalText([]byte(s)); err != nil {
		a.Fail(key, ErrType, "%q is not a duration", s)
		return def
	}
	if d < 0 {
		a.Fail(key, ErrRange, "%q is negative", s)
		return def
	}
	return time.Duration(d)
}

// Int reads an integer in [lo, hi]; absent gives def.
func (a *Args) Int(key string, def, lo, hi int64) int64 {
	v, ok := a.get(key)
	if !ok {
		return def
	}
	var n int64
	switch v := v.(type) {
	case int64:
		n = v
	case int:
		n = int64(v)
	default:
		a.Fail(key, ErrType, "%s is not an integer", ShowValue(v))
		return def
	}
	if n < lo || n > hi {
		a.Fail(key, ErrRange, "%d is out of range %d..%d", n, lo, hi)
		return def
	}
	return n
}

// Float reads a number in [lo, hi]; absent gives def.
func (a *Args) Float(key string, def, lo, hi float64) float64 {
	v, ok := a.get(key)
	if !ok {
		return def
	}
	var f float64
	switch v := v.(type) {
	case float64:
		f = v
	case int64:
		f = float64(v)
	case int:
		f = float64(v)
	default:
		a.Fail(key, ErrType, "%s is not a number", ShowValue(v))
		return def
	}
	if math.IsNaN(f) || f < lo || f > hi {
		a.Fail(key, ErrRange, "%v is out of range %v..%v", f, lo, hi)
		return def
	}
	return f
}

// Bool reads true or false; absent gives def.
func (a *Args) Bool(key string, def bool) bool {
	if v, ok := a.get(key); ok {
		if b, ok := as[bool](a, key, v, "true or false"); ok {
			return b
		}
	}
	return def
}

// String reads a string; absent gives def.
func (a *Args) String(key, def string) string {
	if v, ok := a.get(key); ok {
		if s, ok := as[string](a, key, v, "a string"); ok {
			return s
		}
	}
	return def
}

// as returns v as a T, or records that v is not what (a T, in words).
func as[T any](a *Args, key string, v any, what string) (T, bool) {
	t, ok := v.(T)
	if !ok {
		a.Fail(key, ErrType, "%s is not %s", ShowValue(v), what)
	}
	return t, ok
}

// Strings reads a string or an array of strings; absent gives nil.
func (a *Args) Strings(key string) []string {
	v, ok := a.get(key)
	if !ok {
		return nil
	}
	switch v := v.(type) {
	case string:
		return []string{v}
	case []string:
		return v
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			s, isStr := e.(string)
			if !isStr {
				a.Fail(key, ErrType, "%s in the array is not a string", ShowValue(e))
				return nil
			}
			out = append(out, s)
		}
		if len(out) == 0 {
			a.Fail(key, ErrRange, "the array is empty")
		}
		return out
	default:
		a.Fail(key, ErrType, "%s is not a string or an array of strings", ShowValue(v))
		return nil
	}
}

// Table reads a table of strings; absent gives nil.
func (a *Args) Table(key string) map[string]string {
	v, ok := a.get(key)
	if !ok {
		return nil
	}
	var m map[string]any
	switch v := v.(type) {
	case map[string]string:
		return v
	case map[string]any:
		m = v
	default:
		a.Fail(key, ErrType, "%s is not a table", ShowValue(v))
		return nil
	}
	out := make(map[string]string, len(m))
	for _, k := range sortedKeys(m) {
		if s, ok := as[string](a, key+"."+k, m[k], "a string"); ok {
			out[k] = s
		}
	}
	return out
}

// Require reports a missing key.
func (a *Args) Require(key, what string) bool {
	if a.Has(key) {
		return true
	}
	a.Fail("", ErrMissing, "kind %q needs %s (%s)", a.kind, key, what)
	return false
}

// OneOf reports unless exactly one of keys is present, and returns it.
func (a *Args) OneOf(keys ...string) string {
	var found []string
	for _, k := range keys {
		if a.Has(k) {
			found = append(found, k)
		}
	}
	switch len(found) {
	case 1:
		return found[0]
	case 0:
		a.Fail("", ErrMissing, "kind %q needs one of %s", a.kind, strings.Join(keys, ", "))
	default:
		a.Fail(found[1], ErrConflict, "%s cannot be used with %s; kind %q takes one of %s",
			found[1], found[0], a.kind, strings.Join(keys, ", "))
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
