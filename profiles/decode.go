package profiles

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/checks"
)

// decoder turns a decoded TOML document into a Profile, collecting every
// problem.
type decoder struct {
	p    *Profile
	errs Errors
}

var topKeys = []string{"name", "description", "seed", "exercises", "checks", "fault"}

func (d *decoder) fail(path string, atKey bool, sentinel error, format string, v ...any) {
	d.errs = append(d.errs, d.p.errorAt(path, atKey, sentinel, fmt.Sprintf(format, v...)))
}

func (d *decoder) top(doc map[string]any) {
	for _, k := range sortedKeys(doc) {
		v := doc[k]
		switch k {
		case "name":
			d.p.Name = d.str(k, v)
		case "description":
			d.p.Description = d.str(k, v)
		case "seed":
			d.seed(v)
		case "exercises":
			d.exercises(v)
		case "checks":
			d.checks(v)
		case "fault":
			d.faults(v)
		default:
			d.fail(joinKey("", k), true, ErrUnknownKey, "unknown key %q%s (a profile has %s)", k, faults.DidYouMean(k, topKeys), strings.Join(topKeys, ", "))
		}
	}
}

func (d *decoder) str(path string, v any) string {
	s, ok := v.(string)
	if !ok {
		d.fail(path, false, ErrType, "%s is not a string", faults.ShowValue(v))
	}
	return s
}

func (d *decoder) seed(v any) {
	n, ok := v.(int64)
	switch {
	case !ok:
		d.fail("seed", false, ErrType, "%s is not an integer", faults.ShowValue(v))
	case n < 0:
		d.fail("seed", false, ErrRange, "%d is negative", n)
	default:
		d.p.Seed = uint64(n)
	}
}

// exercises reads the list of recoveries the profile exists to exercise;
// Validate checks the names.
func (d *decoder) exercises(v any) {
	list, ok := v.([]any)
	if !ok {
		d.fail("exercises", false, ErrType, "%s is not a list of strings (%s)", faults.ShowValue(v), strings.Join(faults.Purposes(), ", "))
		return
	}
	d.p.Exercises = []string{}
	for _, e := range list {
		name, ok := e.(string)
		if !ok {
			d.fail("exercises", false, ErrType, "%s is not a string (%s)", faults.ShowValue(e), strings.Join(faults.Purposes(), ", "))
			continue
		}
		d.p.Exercises = append(d.p.Exercises, name)
	}
}

// checks flattens [checks], so `client.retry-honoured = "error"` and
// `"client.retry-honoured" = "error"` name the same check.
func (d *decoder) checks(v any) {
	m, ok := v.(map[string]any)
	if !ok {
		d.fail("checks", false, ErrType, "%s is not a table", faults.ShowValue(v))
		return
	}
	d.p.Checks = map[string]checks.Severity{}
	d.p.checkPaths = map[string]string{}
	d.checkTable("checks", "", m)
}

func (d *decoder) checkTable(path, id string, m map[string]any) {
	for _, k := range sortedKeys(m) {
		kp, kid := joinKey(path, k), k
		if id != "" {
			kid = id + "." + k
		}
		switch v := m[k].(type) {
		case map[string]any:
			d.checkTable(kp, kid, v)
		case string:
			d.p.Checks[kid] = checks.Severity(v)
			d.p.checkPaths[kid] = kp
		default:
			d.fail(kp, false, ErrType, "%s is not \"error\", \"warning\" or \"off\"", faults.ShowValue(v))
		}
	}
}

// checkErrors validates one check id (it must be in the verifier's
// catalog) and its severity.
func (p *Profile) checkErrors(id string, s checks.Severity) []*Error {
	path, ok := p.checkPaths[id]
	if !ok {
		path = "checks." + id
	}
	var out []*Error
	if _, known := checks.Lookup(id); !known {
		msg := fmt.Sprintf("unknown check %q", id)
		if sug := suggestCheck(id); sug != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", sug)
		}
		out = append(out, p.errorAt(path, true, ErrUnknownKey, msg))
	}
	switch s {
	case checks.Error, checks.Warning, checks.Off:
	default:
		out = append(out, p.errorAt(path, false, ErrRange, fmt.Sprintf("%q is not \"error\", \"warning\" or \"off\"", string(s))))
	}
	return out
}

// suggestCheck returns the check id an unknown one most likely meant: the
// nearest by edit distance when it is within a third of the id's length
// (at least two edits); else, in the same group ("client."), the longest
// id whose name the unknown name contains, or the shortest whose name
// contains the unknown name; else "".
func suggestCheck(id string) string {
	best, bestDist := "", max(2, len(id)/3)+1
	for _, c := range checks.Catalog() {
		if d := faults.EditDistance(id, c.ID); d < bestDist {
			best, bestDist = c.ID, d
		}
	}
	if best != "" {
		return best
	}
	group, name, _ := strings.Cut(id, ".")
	for _, c := range checks.Catalog() {
		cg, cn, _ := strings.Cut(c.ID, ".")
		if cg == group && strings.Contains(name, cn) && len(c.ID) > len(best) {
			best = c.ID
		}
	}
	if best != "" || name == "" {
		return best
	}
	for _, c := range checks.Catalog() {
		cg, cn, _ := strings.Cut(c.ID, ".")
		if cg == group && strings.Contains(cn, name) && (best == "" || len(c.ID) < len(best)) {
			best = c.ID
		}
	}
	return best
}

func (d *decoder) faults(v any) {
	arr, ok := v.([]any)
	if !ok {
		d.fail("fault", false, ErrType, "%s is not an array of tables (write [[fault]])", faults.ShowValue(v))
		return
	}
	for i, e := range arr {
		path := indexKey("fault", i)
		m, ok := e.(map[string]any)
		if !ok {
			d.fail(path, false, ErrType, "%s is not a table", faults.ShowValue(e))
			continue
		}
		sp := faults.Spec{Params: m}
		if k, ok := m["kind"]; ok {
			sp.Kind = d.str(joinKey(path, "kind"), k)
		}
		d.p.Faults = append(d.p.Faults, sp)
	}
}

// merge adds problems found by Validate, leaving out those at a path the
// decoder already reported (a kind that is not a string is not also an
// unknown kind).
func (d *decoder) merge(es Errors) {
	seen := map[string]bool{}
	for _, e := range d.errs {
		seen[e.Path] = true
	}
	for _, e := range es {
		if !seen[e.Path] {
			d.errs = append(d.errs, e)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
