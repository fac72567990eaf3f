//go:build race

package forward_test

// raceEnabled: the race detector is on. It makes sync.Pool drop items at
// random, so allocation counts mean nothing then.
const raceEnabled = true
