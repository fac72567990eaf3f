package main

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strings"
)

// machine describes where the figures were taken: the CPU model, the
// cores Go sees, the memory, the Go version and the load average as the run began.
func machine() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		model = cpuModel(b)
	}
	mem := "unknown memory"
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		mem = memTotal(b)
	}
	return fmt.Sprintf("%s, %d cores, %s, %s, %s/%s; load average %s", model, runtime.NumCPU(), mem, runtime.Version(),
		runtime.GOOS, runtime.GOARCH, loadAverage())
}

// memTotal is a /proc/meminfo's MemTotal in GiB.
func memTotal(b []byte) string {
	for line := range bytes.Lines(b) {
		rest, ok := bytes.CutPrefix(line, []byte("MemTotal:"))
		if !ok {
			continue
		}
		var kb float64
		if _, err := fmt.Sscanf(string(bytes.TrimSpace(rest)), "%f kB", &kb); err == nil {
			return fmt.Sprintf("%.0f GiB", kb/(1<<20))
		}
	}
	return "unknown memory"
}

// cpuModel is the first "model name" of a /proc/cpuinfo.
func cpuModel(b []byte) string {
	for line := range bytes.Lines(b) {
		k, v, ok := bytes.Cut(line, []byte(":"))
		if ok && string(bytes.TrimSpace(k)) == "model name" {
			return string(bytes.TrimSpace(v))
		}
	}
	return "unknown CPU"
}

// loadAverage is the first three fields of /proc/loadavg: how many
// processes wanted the CPUs over the last 1, 5 and 15 minutes.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
