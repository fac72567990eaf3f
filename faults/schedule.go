package faults

import "time"

// schedule is the window of the run's time in which a fault is active:
// from after on, for `active` (0: for ever), repeating every `every` (0:
// once). The zero schedule is always active.
type schedule struct {
	after, active, every time.Duration
}

// on reports whether the window is open at t, the time since the run began.
func (s *schedule) on(t time.Duration) bool {
	if t < s.after {
		return false
	}
	if s.active == 0 {
		return true
	}
	d := t - s.after
	if s.every > 0 {
		d %= s.every
	}
	return d < s.active
}

// readSchedule reads after (or run_after), for and every.
func readSchedule(a *Args, afterKey string) schedule {
	var s schedule
	if afterKey != "" {
		s.after = a.Duration(afterKey, 0)
	}
	s.active = a.Duration("for", 0)
	s.every = a.Duration("every", 0)
	if a.Has("every") && s.every == 0 {
		a.Fail("every", ErrRange, "every must be longer than 0s")
	}
	if s.every > 0 && !a.Has("for") {
		a.Fail("every", ErrMissing, "every needs for (how long the fault stays on in each period)")
	}
	if a.Has("for") && s.active == 0 {
		a.Fail("for", ErrRange, "for must be longer than 0s")
	}
	if s.every > 0 && s.active >= s.every {
		a.Fail("for", ErrConflict, "for (%v) must be shorter than every (%v)", s.active, s.every)
	}
	return s
}
