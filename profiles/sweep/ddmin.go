package sweep

import "fmt"

// Minimize finds a 1-minimal subset of the elements 0..n-1 for which
// fails holds, by delta debugging (Zeller's ddmin): it tries ever smaller
// chunks and their complements, keeping the first that still fails. It
// assumes the whole set fails and never asks. It calls fails at most
// budget times, never twice for the same subset; exhausted reports that
// the budget ran out before the subset was 1-minimal (the subset is then
// the smallest failing one found). Subsets are passed in ascending order.
func Minimize(n, budget int, fails func(subset []int) bool) (subset []int, runs int, exhausted bool) {
	c := make([]int, n)
	for i := range c {
		c[i] = i
	}
	tried := map[string]bool{}
	test := func(s []int) (failed, ok bool) {
		k := fmt.Sprint(s)
		if f, seen := tried[k]; seen {
			return f, true
		}
		if runs >= budget {
			return false, false
		}
		runs++
		tried[k] = fails(s)
		return tried[k], true
	}
	gran := 2
	for len(c) >= 2 {
		chunks := split(c, gran)
		next, chunk, ok := reduce(chunks, c, test)
		if !ok {
			return c, runs, true
		}
		switch {
		case next != nil && chunk:
			c, gran = next, 2
		case next != nil:
			c, gran = next, max(gran-1, 2)
		case gran >= len(c):
			return c, runs, false
		default:
			gran = min(2*gran, len(c))
		}
	}
	return c, runs, false
}

// reduce tries each chunk, then each complement; it returns the first
// that fails (chunk says which of the two it is), nil when none does, and
// ok false when the budget ran out.
func reduce(chunks [][]int, c []int, test func([]int) (bool, bool)) (next []int, chunk, ok bool) {
	for _, ch := range chunks {
		failed, ok := test(ch)
		if !ok {
			return nil, false, false
		}
		if failed {
			return ch, true, true
		}
	}
	if len(chunks) == 2 {
		return nil, false, true // the complements are the chunks
	}
	for i := range chunks {
		comp := complement(c, chunks[i])
		failed, ok := test(comp)
		if !ok {
			return nil, false, false
		}
		if failed {
			return comp, false, true
		}
	}
	return nil, false, true
}

// split cuts c into n chunks of nearly equal length, in order.
func split(c []int, n int) [][]int {
	out := make([][]int, 0, n)
	start := 0
	for i := range n {
		end := start + (len(c)-start)/(n-i)
		out = append(out, c[start:end])
		start = end
	}
	return out
}

// complement is c without the elements of ch, a contiguous part of it.
func complement(c, ch []int) []int {
	out := make([]int, 0, len(c)-len(ch))
	drop := map[int]bool{}
	for _, x := range ch {
		drop[x] = true
	}
	for _, x := range c {
		if !drop[x] {
			out = append(out, x)
		}
	}
	return out
}
