//go:build !linux

package benchsse

import "time"

// HostSteal reports false: the host's steal time is read on Linux only.
func HostSteal() (time.Duration, bool) { return 0, false }
