package faults

import (
	"fmt"
	"strings"
)

// suggest returns the candidate closest to key when it is a likely typo
// (at most two edits away), or "".
func suggest(key string, candidates ...[]string) string {
	best, bestDist := "", 3
	for _, set := range candidates {
		for _, c := range set {
			if d := EditDistance(key, c); d < bestDist && d < len(c) {
				best, bestDist = c, d
			}
		}
	}
	return best
}

// EditDistance is the Levenshtein distance between a and b, in bytes: the
// measure of every did-you-mean fray offers for a mistyped key or name.
func EditDistance(a, b string) int { return distance(a, b, false) }

// Nearest returns the name in names that a mistyped one most likely meant,
// for a did-you-mean in an error message: the closest by edit distance
// when it is within a third of the name's length (at least one edit, a
// swap of two neighbours counting as one);
// else the only name that begins with the mistyped one, or that the
// mistyped one begins with ("lossy" for "lossy-resume"); else "".
func Nearest(name string, names []string) string {
	if name == "" {
		return ""
	}
	best, bestDist := "", max(1, len(name)/3)+1
	for _, n := range names {
		if d := distance(name, n, true); d < bestDist && d < len(n) {
			best, bestDist = n, d
		}
	}
	if best != "" {
		return best
	}
	var found []string
	for _, n := range names {
		if strings.HasPrefix(n, name) || strings.HasPrefix(name, n) {
			found = append(found, n)
		}
	}
	if len(found) == 1 {
		return found[0]
	}
	return ""
}

// DidYouMean is " (did you mean %q?)" for Nearest's answer, or "".
func DidYouMean(name string, names []string) string {
	if s := Nearest(name, names); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return ""
}

// distance is the edit distance between a and b, with swaps of two
// neighbouring bytes as one edit or not (with them, it is the optimal
// string alignment distance: "nmae" is one typo away from "name", not
// two). It keeps three rows of the table, so that a long key costs no
// more memory than its length.
func distance(a, b string, swaps bool) int {
	pp, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if swaps && i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], pp[j-2]+1)
			}
		}
		pp, prev, cur = prev, cur, pp
	}
	return prev[len(b)]
}
