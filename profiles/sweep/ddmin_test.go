package sweep

import (
	"fmt"
	"slices"
	"testing"
)

// needs is an oracle that fails when the subset holds every element of
// culprits.
func needs(culprits ...int) func([]int) bool {
	return func(s []int) bool {
		for _, c := range culprits {
			if !slices.Contains(s, c) {
				return false
			}
		}
		return true
	}
}

func TestMinimize(t *testing.T) {
	for _, tt := range []struct {
		name      string
		n, budget int
		fails     func([]int) bool
		want      []int
		exhausted bool
	}{
		{"one culprit among eight", 8, 100, needs(5), []int{5}, false},
		{"two culprits apart", 8, 100, needs(1, 6), []int{1, 6}, false},
		{"three culprits", 16, 200, needs(0, 7, 15), []int{0, 7, 15}, false},
		{"every element matters", 4, 100, needs(0, 1, 2, 3), []int{0, 1, 2, 3}, false},
		{"one element", 1, 100, needs(0), []int{0}, false},
		{"none", 0, 100, needs(), []int{}, false},
		{"either of two suffices", 6, 100, func(s []int) bool { return slices.Contains(s, 2) || slices.Contains(s, 4) }, []int{2}, false},
		{"the budget runs out", 16, 2, needs(3), []int{0, 1, 2, 3}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			seen := map[string]bool{}
			calls := 0
			got, runs, exhausted := Minimize(tt.n, tt.budget, func(s []int) bool {
				calls++
				if seen[fmt.Sprint(s)] {
					t.Errorf("subset %v tried twice", s)
				}
				seen[fmt.Sprint(s)] = true
				if !slices.IsSorted(s) {
					t.Errorf("subset %v not in order", s)
				}
				return tt.fails(s)
			})
			if !slices.Equal(got, tt.want) || exhausted != tt.exhausted {
				t.Errorf("Minimize = %v (exhausted %v), want %v (exhausted %v)", got, exhausted, tt.want, tt.exhausted)
			}
			if runs != calls || runs > tt.budget {
				t.Errorf("runs %d, calls %d, budget %d", runs, calls, tt.budget)
			}
		})
	}
}
