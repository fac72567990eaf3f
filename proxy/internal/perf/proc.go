package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// clockTick is the unit of /proc/PID/stat's times: USER_HZ, 100 on every
// Linux architecture Go runs on.
const clockTick = time.Second / 100

// procCPU is the CPU time process pid has used so far, user and system,
// all its threads, as the kernel counts it.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("perf: %w", err)
	}
	return parseStatCPU(b)
}

// parseStatCPU reads utime and stime (fields 14 and 15) from a
// /proc/PID/stat line. The command name (field 2) is in parentheses and
// may hold spaces, so fields are counted from its closing one.
func parseStatCPU(b []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("perf: /proc/PID/stat %q: no command name", b)
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state): utime is field 14, stime field 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("perf: /proc/PID/stat %q: %d fields after the name, want at least 13", b, len(f))
	}
	utime, err1 := strconv.ParseInt(string(f[11]), 10, 64)
	stime, err2 := strconv.ParseInt(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("perf: /proc/PID/stat %q: utime %q, stime %q: want numbers", b, f[11], f[12])
	}
	return time.Duration(utime+stime) * clockTick, nil
}

// procRSS is process pid's resident set size (VmRSS), in bytes.
func procRSS(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("perf: %w", err)
	}
	return parseVmRSS(b)
}

// parseVmRSS reads the VmRSS line of a /proc/PID/status, in bytes.
func parseVmRSS(b []byte) (uint64, error) {
	for line := range bytes.Lines(b) {
		rest, ok := bytes.CutPrefix(line, []byte("VmRSS:"))
		if !ok {
			continue
		}
		v := bytes.TrimSuffix(bytes.TrimSpace(rest), []byte(" kB"))
		kb, err := strconv.ParseUint(string(v), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("perf: VmRSS %q: want kB", bytes.TrimSpace(rest))
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("perf: no VmRSS line in /proc/PID/status")
}
