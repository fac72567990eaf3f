//go:build !race

package proxy_test

// raceEnabled: see race_on_test.go.
const raceEnabled = false
