package faults

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// args reads one fault's keys for a kind's constructor and the selector
// parser, and collects every problem instead of stopping at the first.
type args struct {
	fault int
	kind  string
	m     map[string]any
	used  map[string]bool
	errs  []*ParamError
}

func newArgs(fault int, kind string, m map[string]any) *args {
	return &args{fault: fault, kind: kind, m: m, used: map[string]bool{"kind": true}}
}

// has reports whether key is present.
func (a *args) has(key string) bool {
	_, ok := a.m[key]
	return ok
}

// get returns key's value and marks the key as read.
func (a *args) get(key string) (any, bool) {
	v, ok := a.m[key]
	if ok {
		a.used[key] = true
	}
	return v, ok
}

func (a *args) fail(key string, sentinel error, format string, v ...any) {
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

// duration reads a non-negative duration string; absent gives def.
func (a *args) duration(key string, def time.Duration) time.Duration {
	v, ok := a.get(key)
	if !ok {
		return def
	}
	s, isStr := v.(string)
	if !isStr {
		a.fail(key, ErrType, "%s is not a duration (write a string such as \"250ms\")", ShowValue(v))
		return def
	}
	var d Duration
	if err := d.UnmarshalText([]byte(s)); err != nil {
		a.fail(key, ErrType, "%q is not a duration", s)
		return def
	}
	if d < 0 {
		a.fail(key, ErrRange, "%q is negative", s)
		return def
	}
	return time.Duration(d)
}

// integer reads an integer in [lo, hi]; absent gives def.
func (a *args) integer(key string, def, lo, hi int64) int64 {
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
		a.fail(key, ErrType, "%s is not an integer", ShowValue(v))
		return def
	}
	if n < lo || n > hi {
		a.fail(key, ErrRange, "%d is out of range %d..%d", n, lo, hi)
		return def
	}
	return n
}

// float reads a number in [lo, hi]; absent gives def.
func (a *args) float(key string, def, lo, hi float64) float64 {
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
		a.fail(key, ErrType, "%s is not a number", ShowValue(v))
		return def
	}
	if math.IsNaN(f) || f < lo || f > hi {
		a.fail(key, ErrRange, "%v is out of range %v..%v", f, lo, hi)
		return def
	}
	return f
}

// boolean reads true or false; absent gives def.
func (a *args) boolean(key string, def bool) bool {
	v, ok := a.get(key)
	if !ok {
		return def
	}
	b, isBool := v.(bool)
	if !isBool {
		a.fail(key, ErrType, "%s is not true or false", ShowValue(v))
		return def
	}
	return b
}

// str reads a string; absent gives def.
func (a *args) str(key, def string) string {
	v, ok := a.get(key)
	if !ok {
		return def
	}
	s, isStr := v.(string)
	if !isStr {
		a.fail(key, ErrType, "%s is not a string", ShowValue(v))
		return def
	}
	return s
}

// strs reads a string or an array of strings; absent gives nil.
func (a *args) strs(key string) []string {
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
				a.fail(key, ErrType, "%s in the array is not a string", ShowValue(e))
				return nil
			}
			out = append(out, s)
		}
		if len(out) == 0 {
			a.fail(key, ErrRange, "the array is empty")
		}
		return out
	default:
		a.fail(key, ErrType, "%s is not a string or an array of strings", ShowValue(v))
		return nil
	}
}

// table reads a table of strings; absent gives nil.
func (a *args) table(key string) map[string]string {
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
		a.fail(key, ErrType, "%s is not a table", ShowValue(v))
		return nil
	}
	out := make(map[string]string, len(m))
	for _, k := range sortedKeys(m) {
		s, isStr := m[k].(string)
		if !isStr {
			a.fail(key+"."+k, ErrType, "%s is not a string", ShowValue(m[k]))
			continue
		}
		out[k] = s
	}
	return out
}

// require reports a missing key.
func (a *args) require(key, what string) bool {
	if a.has(key) {
		return true
	}
	a.fail("", ErrMissing, "kind %q needs %s (%s)", a.kind, key, what)
	return false
}

// oneOf reports unless exactly one of keys is present, and returns it.
func (a *args) oneOf(keys ...string) string {
	var found []string
	for _, k := range keys {
		if a.has(k) {
			found = append(found, k)
		}
	}
	switch len(found) {
	case 1:
		return found[0]
	case 0:
		a.fail("", ErrMissing, "kind %q needs one of %s", a.kind, strings.Join(keys, ", "))
	default:
		a.fail(found[1], ErrConflict, "%s cannot be used with %s; kind %q takes one of %s",
			found[1], found[0], a.kind, strings.Join(keys, ", "))
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
