//go:build !race

package forward_test

// raceEnabled: see race_on_test.go.
const raceEnabled = false
