package forward

import (
	"context"
	"time"
)

// Clock is the proxy's source of time. Tests give a fake one so that delays,
// stalls and timed closes run without waiting. Implementations must be safe
// for concurrent use.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f in its own goroutine after d, unless stop is
	// called first; stop reports whether it prevented the call.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// SystemClock is the real clock: time.Now and time.AfterFunc.
var SystemClock Clock = realClock{}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// sleeper sleeps on a clock again and again, as sleep does. On the real
// clock it reuses one timer, so that a stream's delays allocate nothing
// after the first; on another clock it sleeps as sleep does. The zero value
// is ready; it is used by one goroutine at a time.
type sleeper struct{ timer *time.Timer }

// sleep waits d on c, or until ctx is done; it reports whether the full
// wait elapsed.
func (s *sleeper) sleep(ctx context.Context, c Clock, d time.Duration) bool {
	if _, real := c.(realClock); !real || d <= 0 {
		return sleep(ctx, c, d)
	}
	if s.timer == nil {
		s.timer = time.NewTimer(d)
	} else {
		s.timer.Reset(d)
	}
	select {
	case <-s.timer.C:
		return true
	case <-ctx.Done():
		s.timer.Stop()
		return false
	}
}

// stop releases the timer, if one was made.
func (s *sleeper) stop() {
	if s.timer != nil {
		s.timer.Stop()
	}
}

// sleep waits d on c, or until ctx is done; it reports whether the full
// wait elapsed.
func sleep(ctx context.Context, c Clock, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	done := make(chan struct{})
	stop := c.AfterFunc(d, func() { close(done) })
	select {
	case <-done:
		return true
	case <-ctx.Done():
		stop()
		return false
	}
}
