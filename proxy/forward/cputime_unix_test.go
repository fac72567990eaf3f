//go:build unix

package forward_test

import (
	"syscall"
	"time"
)

// processCPU returns the user and system CPU time the whole process has
// used so far, as the OS counts it (getrusage).
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
