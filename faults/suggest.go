package faults

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
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
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
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
