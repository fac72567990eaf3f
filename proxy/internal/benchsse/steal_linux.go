//go:build linux

package benchsse

import (
	"bytes"
	"os"
	"strconv"
	"time"
)

// clockTick is the unit of /proc/stat's times: USER_HZ, 100 on every
// Linux architecture Go runs on.
const clockTick = time.Second / 100

// HostSteal returns the time the hypervisor has run other work while the
// machine's CPUs wanted to run, summed over them, since boot: the "steal"
// column of /proc/stat. On a virtual machine whose host is busy it grows
// at up to one second a second per CPU, and every figure a benchmark
// takes then is of a contended machine. It reports false where the
// kernel does not say (no /proc, or a line without the column).
func HostSteal() (time.Duration, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := bytes.Fields(line)
	// cpu user nice system idle iowait irq softirq steal ...
	if len(f) < 9 || string(f[0]) != "cpu" {
		return 0, false
	}
	n, err := strconv.ParseInt(string(f[8]), 10, 64)
	if err != nil {
		return 0, false
	}
	return time.Duration(n) * clockTick, true
}
