package faults

import (
	"sync"
	"sync/atomic"
)

// limit counts a fault's firings against its `times`, for the whole run or
// per session. It is the only state shared between streams, and safe for
// concurrent use. With max 0 it never refuses.
type limit struct {
	max        int64
	perSession bool
	run        atomic.Int64
	mu         sync.Mutex
	sessions   map[int]int64
}

// take counts one firing and reports whether it was still allowed.
func (l *limit) take(session int) bool {
	if l.max == 0 {
		return true
	}
	if !l.perSession {
		for {
			n := l.run.Load()
			if n >= l.max {
				return false
			}
			if l.run.CompareAndSwap(n, n+1) {
				return true
			}
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sessions == nil {
		l.sessions = make(map[int]int64)
	}
	if l.sessions[session] >= l.max {
		return false
	}
	l.sessions[session]++
	return true
}
