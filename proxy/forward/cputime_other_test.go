//go:build !unix

package forward_test

import "time"

// processCPU reports false: the process's CPU time is read on Unix only.
func processCPU() (time.Duration, bool) { return 0, false }
