package profiles_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/profiles"
)

// TestExercises: the exercises key names what a pass needs, in place of
// what the faults would derive; a bad value is an error that names it.
func TestExercises(t *testing.T) {
	const cut = "[[fault]]\nkind = \"lose\"\nstream = \"post\"\n"
	for _, tc := range []struct {
		name, text string
		want       []faults.Need
		err        string
	}{
		{name: "derived", text: cut, want: []faults.Need{{Fault: 0, Kind: "lose", Any: []string{"cut"}}}},
		{name: "named", text: "exercises = [\"retry\", \"new-session\"]\n" + cut,
			want: []faults.Need{{Fault: -1, Any: []string{"retry"}}, {Fault: -1, Any: []string{"new-session"}}}},
		{name: "none", text: "exercises = []\n" + cut, want: []faults.Need{}},
		{name: "decorative", text: "[[fault]]\nkind = \"latency\"\ndelay = \"5ms\"\n"},
		{name: "unknown name", text: "exercises = [\"cutt\"]\n" + cut, err: `x.toml:1:1: exercises: "cutt" is not one of cut, reconnect, new-session, retry (did you mean "cut"?)`},
		{name: "not a list", text: "exercises = \"cut\"\n" + cut, err: `exercises: "cut" is not a list of strings`},
		{name: "not strings", text: "exercises = [1]\n" + cut, err: `exercises: 1 is not a string`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := profiles.Parse("x.toml", strings.NewReader(tc.text))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Needs(); fmt.Sprint(got) != fmt.Sprint(tc.want) || (got == nil) != (tc.want == nil) {
				t.Errorf("Needs %#v, want %#v", got, tc.want)
			}
		})
	}
}

// TestBuiltinsExerciseOnFirstOpportunity: every recovery a built-in
// needs has a fault that acts on its first opportunity: one without
// probability, or with first = true.
func TestBuiltinsExerciseOnFirstOpportunity(t *testing.T) {
	for _, name := range profiles.Names() {
		p, err := profiles.Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		needs := p.Needs()
		sure := func(i int) bool {
			f := p.Faults[i].Params
			_, random := f["probability"]
			return !random || f["first"] == true
		}
		for _, n := range needs {
			ok := slices.ContainsFunc(needs, func(m faults.Need) bool {
				return sure(m.Fault) && slices.ContainsFunc(m.Any, func(e string) bool { return slices.Contains(n.Any, e) })
			})
			if !ok {
				t.Errorf("%s: fault %d (%s) exercises %v at random, and no fault does so on its first opportunity", name, n.Fault, n.Kind, n.Any)
			}
		}
	}
}
