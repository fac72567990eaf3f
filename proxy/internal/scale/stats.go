package scale

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"syscall"
	"time"
)

// Stats is what a process holds at one moment.
type Stats struct {
	// RSS is the resident set size the kernel reports (VmRSS), in bytes;
	// 0 where /proc is missing.
	RSS uint64 `json:"rss"`
	// HeapInUse is the bytes of heap spans in use: live objects, garbage
	// not yet collected and the free space inside those spans.
	HeapInUse uint64 `json:"heap_in_use"`
	// HeapObjects is the bytes of heap objects, live or not yet collected.
	HeapObjects uint64 `json:"heap_objects"`
	// Stacks is the bytes of goroutine stacks.
	Stacks uint64 `json:"stacks"`
	// Goroutines is the number of goroutines.
	Goroutines int `json:"goroutines"`
	// CPU is the CPU time the process has used so far, user and system.
	CPU time.Duration `json:"cpu"`
	// Reads and Writes count the read and write system calls the process
	// has made so far (syscr and syscw in /proc/PID/io); 0 where /proc is
	// missing.
	Reads  uint64 `json:"reads"`
	Writes uint64 `json:"writes"`
	// Allocs is the bytes the process has allocated on the heap so far,
	// and GCs the garbage collections it has completed.
	Allocs uint64 `json:"allocs"`
	GCs    uint64 `json:"gcs"`
}

var statNames = []string{
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/stacks:bytes",
	"/sched/goroutines:goroutines",
	"/gc/heap/allocs:bytes",
	"/gc/cycles/total:gc-cycles",
}

// ReadStats reads this process's Stats. With gc it first collects garbage
// and returns freed pages to the system, so that HeapObjects is the live
// heap and RSS what the process really holds.
func ReadStats(gc bool) Stats {
	if gc {
		runtime.GC()
		debug.FreeOSMemory()
	}
	samples := make([]metrics.Sample, len(statNames))
	for i, n := range statNames {
		samples[i].Name = n
	}
	metrics.Read(samples)
	val := func(i int) uint64 {
		if samples[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return samples[i].Value.Uint64()
	}
	return Stats{
		RSS:         vmRSS(),
		HeapObjects: val(0),
		HeapInUse:   val(0) + val(1),
		Stacks:      val(2),
		Goroutines:  int(val(3)),
		CPU:         cpuTime(),
		Reads:       procIO("syscr:"),
		Writes:      procIO("syscw:"),
		Allocs:      val(4),
		GCs:         val(5),
	}
}

// procIO reads the counter called name from /proc/self/io.
func procIO(name string) uint64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0
	}
	for line := range bytes.Lines(b) {
		if rest, ok := bytes.CutPrefix(line, []byte(name)); ok {
			v, _ := strconv.ParseUint(string(bytes.TrimSpace(rest)), 10, 64)
			return v
		}
	}
	return 0
}

// cpuTime is the CPU time this process has used, user and system; 0 where
// getrusage fails.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// vmRSS reads VmRSS from /proc/self/status, in bytes.
func vmRSS() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmRSS:"))
		if !ok {
			continue
		}
		kb, err := strconv.ParseUint(string(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte(" kB"))), 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}

// RaiseFileLimit raises this process's RLIMIT_NOFILE to want (every stream
// is a socket, and a proxy holds two) and returns the limit now in force.
// Past the hard limit it needs privilege (CAP_SYS_RESOURCE); without it the
// soft limit goes as far as the hard one, and the caller sees how far.
func RaiseFileLimit(want uint64) (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, fmt.Errorf("scale: reading RLIMIT_NOFILE: %w", err)
	}
	if lim.Cur >= want {
		return lim.Cur, nil
	}
	if want > lim.Max {
		up := syscall.Rlimit{Cur: want, Max: want}
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &up) == nil {
			return want, nil
		}
	}
	lim.Cur = min(want, lim.Max)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, fmt.Errorf("scale: raising RLIMIT_NOFILE to %d: %w", lim.Cur, err)
	}
	return lim.Cur, nil
}
