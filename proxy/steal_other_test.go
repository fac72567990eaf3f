//go:build !linux

package proxy_test

import "time"

// hostSteal reports false: the host's steal time is read on Linux only.
func hostSteal() (time.Duration, bool) { return 0, false }
