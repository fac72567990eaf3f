// Package scale holds the peers fray's performance command
// (proxy/internal/perf) drives a proxy with at scale:
//
//   - Upstream, an SSE server that holds thousands of streams idle until
//     told to write events on all of them, and Streams, the clients that
//     hold them open and count what arrives;
//   - SoakUpstream and SoakClient, a resumable MCP server and clients whose
//     sessions come and go for as long as a soak runs;
//   - RaiseFileLimit, for the sockets all of that takes.
package scale

import (
	"fmt"
	"syscall"
)

// RaiseFileLimit raises this process's RLIMIT_NOFILE to want (every stream
// is a socket, and a proxy holds two) and returns the limit now in force.
// Past the hard limit it needs privilege (CAP_SYS_RESOURCE); without it the
// soft limit goes as far as the hard one, and the caller sees how far.
// Child processes inherit the limit.
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
