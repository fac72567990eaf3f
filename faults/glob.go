package faults

// glob matches s against a pattern in which '*' stands for any run of bytes
// ('/' included) and '?' for one byte; every other byte stands for itself.
// It works on strings and byte slices alike and never allocates, so event
// selectors can use it on the pump's buffers.
func glob[S ~string | ~[]byte](pattern string, s S) bool {
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == s[i]):
			p++
			i++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case star >= 0:
			mark++
			p, i = star+1, mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
